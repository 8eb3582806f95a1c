import type { Draft } from './api';

const SECTIONS: { key: keyof Draft['sections']; title: string }[] = [
  { key: 'summary', title: 'Summary' },
  { key: 'timeline', title: 'Timeline' },
  { key: 'impact', title: 'Impact' },
  { key: 'rootCause', title: 'Root cause' },
  { key: 'actionItems', title: 'Action items' },
];

/** A five-section postmortem; each claim with the event ids it rests on. */
export function DraftView({ draft, headingLevel = 3 }: { draft: Draft; headingLevel?: 2 | 3 }) {
  const H = headingLevel === 2 ? 'h2' : 'h3';
  const S = headingLevel === 2 ? 'h3' : 'h4';
  return (
    <article className="draft">
      <H>{draft.title}</H>
      {SECTIONS.map(({ key, title }) => (
        <section key={key}>
          <S>{title}</S>
          {draft.sections[key].length === 0 ? (
            <p className="muted">Nothing in this section.</p>
          ) : (
            <ul>
              {draft.sections[key].map((claim, i) => (
                <li key={i}>
                  {claim.text}
                  {claim.eventIds.length > 0 && (
                    <span className="muted cites">
                      {' '}
                      (cites {claim.eventIds.length} event{claim.eventIds.length === 1 ? '' : 's'}:{' '}
                      {claim.eventIds.map((id) => (
                        <code key={id} title={id}>
                          {id.slice(0, 8)}{' '}
                        </code>
                      ))}
                      )
                    </span>
                  )}
                </li>
              ))}
            </ul>
          )}
        </section>
      ))}
    </article>
  );
}
