/** Coloured labels for states; the word is always shown, the colour only repeats it. */
type Tone = 'ok' | 'warn' | 'bad' | 'neutral';

export function Badge({ tone, children, title }: { tone: Tone; children: string; title?: string }) {
  return (
    <span className={tone === 'neutral' ? 'badge' : `badge ${tone}`} title={title}>
      {children}
    </span>
  );
}

const SLO_TONES: Record<string, Tone> = { green: 'ok', yellow: 'warn', red: 'bad', unknown: 'neutral' };
const SLO_WORDS: Record<string, string> = { green: 'ok', yellow: 'warn', red: 'bad', unknown: 'too few samples' };

export function SloBadge({ badge }: { badge: string }) {
  return (
    <Badge tone={SLO_TONES[badge] ?? 'neutral'} title={`SLO badge: ${badge}`}>
      {SLO_WORDS[badge] ?? badge}
    </Badge>
  );
}

const INCIDENT_TONES: Record<string, Tone> = { open: 'bad', acknowledged: 'warn', resolved: 'ok' };
export function IncidentStatus({ status }: { status: string }) {
  return <Badge tone={INCIDENT_TONES[status] ?? 'neutral'}>{status}</Badge>;
}

const SEVERITY_TONES: Record<string, Tone> = { critical: 'bad', major: 'warn', minor: 'neutral' };
export function Severity({ severity }: { severity: string }) {
  return <Badge tone={SEVERITY_TONES[severity] ?? 'neutral'}>{severity}</Badge>;
}

const LEVEL_TONES: Record<string, Tone> = { none: 'ok', watch: 'warn', alert: 'bad' };
export function ForecastLevel({ level }: { level: string }) {
  return <Badge tone={LEVEL_TONES[level] ?? 'neutral'}>{level}</Badge>;
}
