import { createHash } from 'node:crypto';
import { eq } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { honeypotSettings } from '../../src/domains/honeypot/schema.ts';
import { derivedKey } from '../../src/platform/crypto.ts';
import { signPath } from '../../src/platform/http/signed-url.ts';
import type { TestApp } from './app.ts';

/** What `POST {v1}/compliance/bundle` answers. */
export interface BundleAnswer {
  bundleId: string;
  framework: string;
  createdAt: string;
  controlCount: number;
  storage: 'local' | 's3';
  artifacts: { kind: 'json' | 'csv' | 'pdf'; name: string; contentType: string; bytes: number; sha256: string; url: string; expiresAt: string }[];
  manifestText: string;
  manifestSha256: string;
  manifestUrl: string;
  expiredBundles: number;
}

export const sha256 = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');

/** A signed link as the client sends it: the path and query of the absolute URL, with no credential. */
export function getLink(t: TestApp, url: string, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
  const parsed = new URL(url);
  return t.call({ method: 'GET', url: `${parsed.pathname}${parsed.search}`, token: null, headers });
}

/**
 * The key evidence links are signed with, computed here from the deployment secret as the docs say
 * (HKDF-SHA256 of the IP-hash key, purpose `compliance-evidence-links`): a link the test signs
 * itself is accepted only if the service derives the same key.
 */
export async function evidenceLinkKey(t: TestApp): Promise<Buffer> {
  const [row] = await t.app.database.db.select({ value: honeypotSettings.value }).from(honeypotSettings).where(eq(honeypotSettings.key, 'ip-hash-key'));
  if (!row) throw new Error('no ip-hash-key setting');
  return derivedKey(row.value, 'compliance-evidence-links');
}

/** A link to any path, signed with `key`, expiring at `expiresUnix`. */
export function signedLink(key: Buffer, path: string, expiresUnix: number): string {
  return `${path}?expires=${expiresUnix}&signature=${signPath(key, path, expiresUnix)}`;
}

/** The manifest's file lines as [sha256, name, bytes]. */
export function manifestLines(text: string): [string, string, number][] {
  return text
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const [hash, name, bytes, ...rest] = line.split('  ');
      expect(rest, line).toEqual([]);
      return [hash!, name!, Number(bytes)];
    });
}

/**
 * Downloads every file of a bundle through its signed link, re-hashes it and compares with the
 * answer and the manifest; returns the bytes by name (the manifest as `manifest.txt`).
 */
export async function downloadBundle(t: TestApp, bundle: BundleAnswer): Promise<Map<string, Buffer>> {
  const files = new Map<string, Buffer>();
  const listed = manifestLines(bundle.manifestText);
  expect(listed.map(([, name]) => name)).toEqual(bundle.artifacts.map((a) => a.name));
  for (const artifact of bundle.artifacts) {
    const res = await getLink(t, artifact.url);
    expect(res.statusCode, `${artifact.name}: ${res.body.slice(0, 300)}`).toBe(200);
    const bytes = res.rawPayload;
    expect(sha256(bytes), artifact.name).toBe(artifact.sha256);
    expect(bytes.length, artifact.name).toBe(artifact.bytes);
    expect(listed.find(([, name]) => name === artifact.name)).toEqual([sha256(bytes), artifact.name, bytes.length]);
    expect(res.headers['content-type']).toBe(artifact.contentType);
    expect(res.headers['content-disposition']).toBe(`attachment; filename="${artifact.name}"`);
    expect(res.headers['x-content-sha256']).toBe(artifact.sha256);
    expect(res.headers['cache-control']).toBe('private, no-store');
    files.set(artifact.name, bytes);
  }
  expect(sha256(Buffer.from(bundle.manifestText, 'utf8'))).toBe(bundle.manifestSha256);
  const manifest = await getLink(t, bundle.manifestUrl);
  expect(manifest.statusCode).toBe(200);
  expect(manifest.headers['content-type']).toBe('text/plain; charset=utf-8');
  expect(manifest.rawPayload.toString('utf8')).toBe(bundle.manifestText);
  expect(sha256(manifest.rawPayload)).toBe(bundle.manifestSha256);
  files.set('manifest.txt', manifest.rawPayload);
  return files;
}
