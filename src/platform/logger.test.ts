import { describe, expect, it } from 'vitest';
import { createLogger } from './logger.ts';

function capture() {
  const lines: string[] = [];
  return { logger: createLogger('info', { write: (line: string) => lines.push(line) }), text: () => lines.join('') };
}

describe('log redaction of secret fields', () => {
  it('hides plaintexts, signing secrets, webhook URLs and the IP hash key, and keeps the rest', () => {
    const { logger, text } = capture();
    logger.info({ token: 'svctok_fieldsecret1', signingSecret: 'whsec_fieldsecret2', previousSecret: 'whsec_fieldsecret3', ipHashKey: 'hashkeysecret4', webhookUrl: 'https://hooks.test/secretpath5', key: 'ip-hash-key' }, 'record');
    logger.info({ body: { token: 'svctok_bodysecret6', key: 'agk_bodysecret7', secret: 'bodysecret8', name: 'kept-name' } }, 'body');
    logger.info({ destination: { kind: 'webhook', url: 'https://hooks.test/secretpath9', secret: 'destsecret10' }, destinations: [{ kind: 'slack', url: 'https://hooks.test/secretpath11' }] }, 'destinations');
    logger.info({ req: { headers: { 'proxy-authorization': 'Basic proxysecret12', host: 'kept-host' } } }, 'request');
    const out = text();
    for (const n of [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]) expect(out).not.toMatch(new RegExp(`secret(path)?${n}\\b`));
    for (const kept of ['ip-hash-key', 'kept-name', 'webhook', 'slack', 'kept-host']) expect(out).toContain(kept);
    expect(out.match(/\[redacted\]/g)).toHaveLength(12);
  });
});
