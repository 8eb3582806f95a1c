import { describe, expect, it } from 'vitest';
import { EMPTY_DESTINATION, toDestination } from './DestinationFields';

describe('toDestination', () => {
  it('makes a webhook destination from a URL and a long enough secret', () => {
    expect(toDestination({ ...EMPTY_DESTINATION, url: ' https://hooks.example.net/x ', secret: '0123456789abcdef' })).toEqual({
      kind: 'webhook',
      url: 'https://hooks.example.net/x',
      secret: '0123456789abcdef',
    });
  });

  it('says what is missing instead of sending a destination the service refuses', () => {
    expect(toDestination(EMPTY_DESTINATION)).toMatch(/give its URL/);
    expect(toDestination({ ...EMPTY_DESTINATION, url: 'https://hooks.example.net/x', secret: 'short' })).toMatch(/at least 16 characters/);
    expect(toDestination({ ...EMPTY_DESTINATION, kind: 'slack', url: 'ftp://x' })).toMatch(/give its URL/);
  });

  it('needs nothing more for the metrics forwarder, and an optional event type for CI', () => {
    expect(toDestination({ ...EMPTY_DESTINATION, kind: 'metrics' })).toEqual({ kind: 'metrics' });
    expect(toDestination({ ...EMPTY_DESTINATION, kind: 'ci_dispatch' })).toEqual({ kind: 'ci_dispatch' });
    expect(toDestination({ ...EMPTY_DESTINATION, kind: 'ci_dispatch', eventType: 'deploy' })).toEqual({ kind: 'ci_dispatch', eventType: 'deploy' });
    expect(toDestination({ ...EMPTY_DESTINATION, kind: 'slack', url: 'https://hooks.slack.com/services/T/B/x' })).toEqual({ kind: 'slack', url: 'https://hooks.slack.com/services/T/B/x' });
  });
});
