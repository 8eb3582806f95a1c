import { useState } from 'react';

/**
 * A text box's value that starts from (and follows) a value in the address: typing changes only
 * the box; a new address (back button, a link) replaces what was typed.
 */
export function useSyncedText(value: string): [string, (next: string) => void] {
  const [text, setText] = useState(value);
  const [shown, setShown] = useState(value);
  if (shown !== value) {
    setShown(value);
    setText(value);
  }
  return [text, setText];
}
