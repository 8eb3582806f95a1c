import { Value } from '@sinclair/typebox/value';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../config.ts';
import { type Destination, Destinations, destinationHost, redactDestination, redactUrl, validateDestinations } from './destinations.ts';

const bare = loadConfig({});
const configured = loadConfig({
  OBSERVATORY_METRICS_FORWARD_URL: 'https://metrics.example/ingest',
  OBSERVATORY_CI_DISPATCH_URL: 'https://api.github.com/repos/acme/ops/dispatches',
  OBSERVATORY_CI_DISPATCH_TOKEN: 'ghp_example',
});
const labs = loadConfig({ OBSERVATORY_ALLOW_PRIVATE_OUTBOUND: '1', OBSERVATORY_OUTBOUND_ALLOWED_PORTS: '80,443,9000' });
const SECRET = 'a-webhook-secret-of-32-characters';

describe('Destinations schema', () => {
  it('accepts each kind and refuses unknown kinds, missing fields, short secrets and too many entries', () => {
    const good: Destination[] = [
      { kind: 'slack', url: 'https://hooks.slack.com/services/T/B/x' },
      { kind: 'webhook', url: 'https://example.com/hook', secret: SECRET },
      { kind: 'metrics' },
      { kind: 'ci_dispatch' },
      { kind: 'ci_dispatch', eventType: 'honeypot.liar' },
    ];
    expect(Value.Check(Destinations, good)).toBe(true);
    for (const bad of [
      [],
      [{ kind: 'email', to: 'ops@example.com' }],
      [{ kind: 'slack' }],
      [{ kind: 'webhook', url: 'https://example.com/hook', secret: 'short' }],
      [{ kind: 'webhook', url: 'https://example.com/hook', secret: 'x'.repeat(257) }],
      [{ kind: 'slack', url: 'javascript:alert(1)' }],
      [{ kind: 'metrics', url: 'https://elsewhere.example/' }],
      [{ kind: 'ci_dispatch', eventType: 'has spaces' }],
      Array.from({ length: 11 }, () => ({ kind: 'metrics' })),
    ]) {
      expect(Value.Check(Destinations, bad), JSON.stringify(bad).slice(0, 80)).toBe(false);
    }
  });
});

describe('validateDestinations', () => {
  it('accepts usable destinations', () => {
    expect(validateDestinations([{ kind: 'slack', url: 'https://hooks.slack.com/services/T/B/x' }], bare)).toBeNull();
    expect(validateDestinations([{ kind: 'metrics' }, { kind: 'ci_dispatch' }], configured)).toBeNull();
    expect(validateDestinations([{ kind: 'webhook', url: 'http://127.0.0.1:9000/hook', secret: SECRET }], labs)).toBeNull();
  });

  it('names the first unusable destination and why', () => {
    expect(validateDestinations([{ kind: 'metrics' }], bare)).toBe(
      'destinations[0] (metrics): the metrics forwarder is not configured (set OBSERVATORY_METRICS_FORWARD_URL)',
    );
    expect(validateDestinations([{ kind: 'slack', url: 'https://hooks.slack.com/x' }, { kind: 'ci_dispatch' }], bare)).toMatch(
      /^destinations\[1\] \(ci_dispatch\): CI dispatch is not configured/,
    );
    expect(validateDestinations([{ kind: 'webhook', url: 'http://169.254.169.254/latest', secret: SECRET }], bare)).toBe(
      'destinations[0] (webhook): 169.254.169.254 is not a public address (link-local; set OBSERVATORY_ALLOW_PRIVATE_OUTBOUND=1 to allow non-public addresses)',
    );
    expect(validateDestinations([{ kind: 'slack', url: 'http://localhost:8080/x' }], bare)).toBe(
      'destinations[0] (slack): localhost is a loopback name (set OBSERVATORY_ALLOW_PRIVATE_OUTBOUND=1 to allow non-public addresses)',
    );
    expect(validateDestinations([{ kind: 'slack', url: 'https://[::ffff:a00:1]/x' }], bare)).toMatch(/IPv4-mapped private/);
    expect(validateDestinations([{ kind: 'slack', url: 'http://user:pw@hooks.example/x' }], labs)).toMatch(/user name or password/);
    expect(validateDestinations([], bare)).toBe('at least one destination is required');
  });
});

describe('validateDestinations: ports', () => {
  it('refuses a URL on a port outside OBSERVATORY_OUTBOUND_ALLOWED_PORTS (default 80 and 443), private outbound or not', () => {
    const refusal = 'port 8080 is not an allowed outbound port (allowed: 80, 443; set OBSERVATORY_OUTBOUND_ALLOWED_PORTS)';
    expect(validateDestinations([{ kind: 'webhook', url: 'https://hooks.example:8080/x', secret: SECRET }], bare)).toBe(`destinations[0] (webhook): ${refusal}`);
    expect(validateDestinations([{ kind: 'slack', url: 'http://hooks.example:8080/x' }], bare)).toBe(`destinations[0] (slack): ${refusal}`);
    expect(validateDestinations([{ kind: 'webhook', url: 'http://127.0.0.1:6379/', secret: SECRET }], labs)).toMatch(/port 6379 is not an allowed outbound port/);
    expect(validateDestinations([{ kind: 'slack', url: 'https://hooks.example:443/x' }, { kind: 'slack', url: 'http://hooks.example/x' }], bare)).toBeNull();
    const listed = loadConfig({ OBSERVATORY_OUTBOUND_ALLOWED_PORTS: '443,8080' });
    expect(validateDestinations([{ kind: 'slack', url: 'https://hooks.example:8080/x' }], listed)).toBeNull();
    expect(validateDestinations([{ kind: 'slack', url: 'http://hooks.example/x' }], listed)).toMatch(/port 80 is not an allowed outbound port \(allowed: 443, 8080;/);
  });

  it('checks the configured metrics and CI URLs too, naming the variable', () => {
    const offPort = loadConfig({
      OBSERVATORY_METRICS_FORWARD_URL: 'https://metrics.example:9091/push',
      OBSERVATORY_CI_DISPATCH_URL: 'https://ci.example:8443/dispatch',
      OBSERVATORY_CI_DISPATCH_TOKEN: 'ghp_example',
    });
    expect(validateDestinations([{ kind: 'metrics' }], offPort)).toBe(
      'destinations[0] (metrics): OBSERVATORY_METRICS_FORWARD_URL is refused: port 9091 is not an allowed outbound port (allowed: 80, 443; set OBSERVATORY_OUTBOUND_ALLOWED_PORTS)',
    );
    expect(validateDestinations([{ kind: 'ci_dispatch' }], offPort)).toMatch(/^destinations\[0\] \(ci_dispatch\): OBSERVATORY_CI_DISPATCH_URL is refused: port 8443 is not/);
    const internal = loadConfig({ OBSERVATORY_METRICS_FORWARD_URL: 'http://10.0.0.5/push' });
    expect(validateDestinations([{ kind: 'metrics' }], internal)).toBe(
      'destinations[0] (metrics): OBSERVATORY_METRICS_FORWARD_URL is refused: 10.0.0.5 is not a public address (private; set OBSERVATORY_ALLOW_PRIVATE_OUTBOUND=1 to allow non-public addresses)',
    );
  });
});

describe('redaction', () => {
  it('hides secrets, paths and queries', () => {
    expect(redactUrl('https://hooks.slack.com/services/T0/B0/XYZ')).toBe('https://hooks.slack.com/…');
    expect(redactUrl('https://example.com:8443/?token=abc')).toBe('https://example.com:8443/…');
    expect(redactUrl('https://example.com/')).toBe('https://example.com');
    const webhook = redactDestination({ kind: 'webhook', url: 'https://example.com/h/secret', secret: SECRET });
    expect(webhook).toEqual({ kind: 'webhook', url: 'https://example.com/…', secretSet: true });
    expect(JSON.stringify(webhook)).not.toContain(SECRET);
    expect(redactDestination({ kind: 'ci_dispatch' })).toEqual({ kind: 'ci_dispatch', eventType: 'observatory-alert' });
    expect(redactDestination({ kind: 'metrics' })).toEqual({ kind: 'metrics' });
  });

  it('names only the host of a destination', () => {
    expect(destinationHost({ kind: 'slack', url: 'https://hooks.slack.com/services/T/B/x' }, bare.integrations)).toBe('hooks.slack.com');
    expect(destinationHost({ kind: 'ci_dispatch' }, configured.integrations)).toBe('api.github.com');
    expect(destinationHost({ kind: 'metrics' }, bare.integrations)).toBeNull();
  });
});
