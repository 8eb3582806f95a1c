import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config.ts';
import { createLogger } from './logger.ts';

describe('LOG_FORMAT', () => {
  it('defaults to pretty on a terminal and json otherwise', () => {
    expect(loadConfig({}, true).logFormat).toBe('pretty');
    expect(loadConfig({}, false).logFormat).toBe('json');
    expect(loadConfig({ LOG_FORMAT: '' }, true).logFormat).toBe('pretty');
  });

  it('takes json or pretty whatever the terminal says', () => {
    expect(loadConfig({ LOG_FORMAT: 'json' }, true).logFormat).toBe('json');
    expect(loadConfig({ LOG_FORMAT: 'pretty' }, false).logFormat).toBe('pretty');
    expect(loadConfig({ LOG_FORMAT: ' Pretty ' }, false).logFormat).toBe('pretty');
  });

  it('refuses any other value, naming the variable', () => {
    for (const value of ['text', 'yaml', '1']) {
      let error: unknown;
      try {
        loadConfig({ LOG_FORMAT: value }, false);
      } catch (e) {
        error = e;
      }
      expect(error, value).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).variable).toBe('LOG_FORMAT');
      expect((error as ConfigError).message).toMatch(/^LOG_FORMAT: must be one of json, pretty/);
    }
  });
});

describe('pretty logs', () => {
  function capture(format: 'json' | 'pretty') {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    return { logger: createLogger('info', { format, destination: sink, colorize: false }), text: () => lines.join('') };
  }

  it('writes readable lines, not JSON, synchronously', () => {
    const { logger, text } = capture('pretty');
    logger.info({ endpoints: 3 }, 'Observatory is serving');
    const out = text();
    expect(out).toMatch(/INFO.*: Observatory is serving\n/);
    expect(out).toContain('endpoints: 3');
    expect(() => JSON.parse(out)).toThrow();
  });

  it('redacts credential headers and statement values as the JSON format does', () => {
    for (const format of ['pretty', 'json'] as const) {
      const { logger, text } = capture(format);
      logger.info({ req: { headers: { authorization: 'Bearer svctok_prettysecret1', host: 'localhost' } }, headers: { cookie: 'obs_session=prettysecret2' } }, 'request');
      const failed = Object.assign(new Error('Failed query: insert into t values ($1)\nparams: prettysecret3'), { detail: 'Key (x)=(prettysecret4) already exists.' });
      logger.error({ err: failed }, 'write failed');
      const out = text();
      for (const secret of ['prettysecret1', 'prettysecret2', 'prettysecret3', 'prettysecret4']) expect(out, `${format}: ${secret}`).not.toContain(secret);
      expect(out, format).toContain('[redacted]');
      expect(out, format).toContain('localhost');
      expect(out, format).toContain('Failed query');
    }
  });
});
