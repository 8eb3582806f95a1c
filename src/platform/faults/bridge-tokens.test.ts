import { describe, expect, it } from 'vitest';
import { createBridgeTokens } from './bridge-tokens.ts';

const CURRENT = 'bridge-token-current-0123456789abcdefghij';
const NEXT = 'bridge-token-staged-0123456789abcdefghijk';

describe('the bridge tokens', () => {
  it('accepts the current and the staged token and sends the current one until the staged one is asked for', () => {
    const tokens = createBridgeTokens(CURRENT, NEXT);
    expect(tokens.accepts(CURRENT)).toBe(true);
    expect(tokens.accepts(NEXT)).toBe(true);
    expect(tokens.accepts(`${CURRENT}x`)).toBe(false);
    expect(tokens.accepts('')).toBe(false);
    expect(tokens.staged()).toBe(NEXT);
    expect(tokens.outgoing()).toBe(CURRENT);
    expect(tokens.usingStaged()).toBe(false);
    tokens.useStaged(true);
    expect(tokens.outgoing()).toBe(NEXT);
    expect(tokens.usingStaged()).toBe(true);
    // Both are still accepted while the staged one is sent.
    expect(tokens.accepts(CURRENT)).toBe(true);
    tokens.useStaged(false);
    expect(tokens.outgoing()).toBe(CURRENT);
  });

  it('without a staged token, accepts only the current one and refuses to send a staged one', () => {
    const tokens = createBridgeTokens(CURRENT, null);
    expect(tokens.accepts(CURRENT)).toBe(true);
    expect(tokens.accepts(NEXT)).toBe(false);
    expect(tokens.staged()).toBeNull();
    expect(() => tokens.useStaged(true)).toThrow(/OBSERVATORY_BRIDGE_TOKEN_NEXT/);
    expect(tokens.outgoing()).toBe(CURRENT);
    expect(tokens.usingStaged()).toBe(false);
    tokens.useStaged(false);
  });

  it('without a current token, accepts nothing and sends nothing, staged or not', () => {
    for (const tokens of [createBridgeTokens(null, null), createBridgeTokens(null, NEXT), createBridgeTokens('', NEXT)]) {
      expect(tokens.accepts(NEXT)).toBe(false);
      expect(tokens.accepts('')).toBe(false);
      expect(tokens.outgoing()).toBeNull();
      expect(tokens.staged()).toBeNull();
      expect(() => tokens.useStaged(true)).toThrow();
    }
  });
});
