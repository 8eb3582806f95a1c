/** A ranked list with proportional bars: top paths, agents, countries. */
export function BarList({ items, label }: { items: readonly { name: string; count: number }[]; label: string }) {
  if (items.length === 0) return <p className="empty">None in this window.</p>;
  const max = Math.max(...items.map((i) => i.count), 1);
  return (
    <ol className="barlist" aria-label={label}>
      {items.map((item) => (
        <li key={item.name}>
          <span className="bar" style={{ width: `${(item.count / max) * 100}%` }} aria-hidden="true" />
          <span className="name" title={item.name}>
            {item.name}
          </span>
          <span className="count">{item.count.toLocaleString()}</span>
        </li>
      ))}
    </ol>
  );
}
