import { describe, expect, it } from 'vitest';
import { consolePath } from './drillIn';

describe('a dimension\'s drill-in', () => {
  it('is routed inside the console whether or not the service names the /console prefix', () => {
    expect(consolePath('/trust/drift')).toBe('/trust/drift');
    expect(consolePath('/compliance?framework=soc2')).toBe('/compliance?framework=soc2');
    expect(consolePath('/console/audit')).toBe('/audit');
    expect(consolePath('/console')).toBe('/');
    expect(consolePath('/consoles')).toBe('/consoles');
  });
});
