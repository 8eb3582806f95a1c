/** A description with its `code` spans set as code (the manifest writes them in backticks). */
export function Described({ text }: { text: string }) {
  const parts = text.split('`');
  return (
    <p>
      {parts.map((part, i) => (i % 2 === 1 ? <code key={i}>{part}</code> : <span key={i}>{part}</span>))}
    </p>
  );
}
