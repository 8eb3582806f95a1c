import { describe, expect, it } from 'vitest';
import { readConfig } from './config.ts';

const env = { OBSERVATORY_URL: 'http://127.0.0.1:8080', OBSERVATORY_TENANT: 'site', OBSERVATORY_TENANT_SECRET: 's' };

describe('the command line', () => {
  it('reads the files, the format and the options', () => {
    const read = readConfig(['--format', 'nginx', '--log-format', '$remote_addr "$request"', '--state-dir', '/tmp/s', '--poll-ms', '50', '--ja4-variables', '$http_x_ja4, ja4', '--from-end', 'a.log', 'b.log'], env);
    expect(read).toEqual({
      config: {
        url: 'http://127.0.0.1:8080',
        tenant: 'site',
        secret: 's',
        paths: ['a.log', 'b.log'],
        stateDir: '/tmp/s',
        format: 'nginx',
        logFormat: '$remote_addr "$request"',
        ja4Variables: ['http_x_ja4', 'ja4'],
        pollMs: 50,
        startAtEnd: true,
        statsEveryMs: 60_000,
      },
    });
  });

  it('takes the state directory and format from the environment too', () => {
    expect(readConfig(['x.log'], { ...env, LOG_SHIPPER_STATE_DIR: '/var/lib/ls', LOG_SHIPPER_FORMAT: 'caddy' })).toMatchObject({ config: { stateDir: '/var/lib/ls', format: 'caddy' } });
  });

  it.each([
    ['a missing service URL', ['--state-dir', 's', 'x.log'], { ...env, OBSERVATORY_URL: '' }, /OBSERVATORY_URL is required/],
    ['a missing secret', ['--state-dir', 's', 'x.log'], { ...env, OBSERVATORY_TENANT_SECRET: undefined }, /OBSERVATORY_TENANT_SECRET is required/],
    ['a URL that is not http', ['--state-dir', 's', 'x.log'], { ...env, OBSERVATORY_URL: 'ftp://x' }, /http\(s\) URL/],
    ['no file', ['--state-dir', 's'], env, /no access log/],
    ['no state directory', ['x.log'], env, /--state-dir/],
    ['an unknown format', ['--state-dir', 's', '--format', 'iis', 'x.log'], env, /--format must be one of/],
    ['an nginx format without its string', ['--state-dir', 's', '--format', 'nginx', 'x.log'], env, /needs --log-format/],
    ['a poll interval that is no number', ['--state-dir', 's', '--poll-ms', 'soon', 'x.log'], env, /--poll-ms must be/],
    ['an unknown option', ['--state-dir', 's', '--tail', 'x.log'], env, /tail/],
  ])('names the problem with %s', (_, argv, environment, message) => {
    const read = readConfig(argv, environment);
    expect('problem' in read && read.problem).toMatch(message);
  });
});
