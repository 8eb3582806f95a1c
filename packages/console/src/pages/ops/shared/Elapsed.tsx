import { useEffect, useState } from 'react';
import { Busy } from '../../../components';

/** A progress note that counts the seconds, for work that may take minutes (a snapshot, a drill). */
export function Elapsed({ label }: { label: string }) {
  const [started] = useState(() => Date.now());
  const [now, setNow] = useState(started);
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, []);
  return <Busy label={`${label} (${Math.floor((now - started) / 1000)} s)`} />;
}
