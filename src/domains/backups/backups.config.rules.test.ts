import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../platform/config.ts';

/** The backups block of the configuration (docs/operations.md, "Backups"). */

const load = (env: Record<string, string>) => loadConfig(env, false).backups;
const refusal = (env: Record<string, string>) => {
  try {
    load(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.variable;
    throw error;
  }
  return null;
};

describe('backups configuration', () => {
  it('defaults: files under DATA_DIR/backups, 14 days, database observatory, tools on the PATH, no S3', () => {
    expect(load({})).toEqual({
      dir: './data/backups',
      retentionDays: 14,
      database: 'observatory',
      pgDumpPath: 'pg_dump',
      pgRestorePath: 'pg_restore',
      scratchPrefix: 'obs_restore',
      s3: null,
    });
    expect(load({ DATA_DIR: '/var/lib/obs/' }).dir).toBe('/var/lib/obs/backups');
    expect(load({ DATA_DIR: '/var/lib/obs', OBSERVATORY_BACKUP_DIR: '/backups' }).dir).toBe('/backups');
    expect(load({ OBSERVATORY_BACKUP_RETENTION_DAYS: '0' }).retentionDays).toBe(0);
  });

  it('refuses values that would break a file name, a database name or S3, naming the variable', () => {
    expect(refusal({ OBSERVATORY_BACKUP_DATABASE: 'Observatory' })).toBe('OBSERVATORY_BACKUP_DATABASE');
    expect(refusal({ OBSERVATORY_BACKUP_DATABASE: '../etc' })).toBe('OBSERVATORY_BACKUP_DATABASE');
    expect(refusal({ OBSERVATORY_BACKUP_SCRATCH_PREFIX: 'obs-restore' })).toBe('OBSERVATORY_BACKUP_SCRATCH_PREFIX');
    expect(refusal({ OBSERVATORY_BACKUP_SCRATCH_PREFIX: '1obs' })).toBe('OBSERVATORY_BACKUP_SCRATCH_PREFIX');
    expect(refusal({ OBSERVATORY_BACKUP_RETENTION_DAYS: '-1' })).toBe('OBSERVATORY_BACKUP_RETENTION_DAYS');
    expect(refusal({ OBSERVATORY_BACKUP_RETENTION_DAYS: '3651' })).toBe('OBSERVATORY_BACKUP_RETENTION_DAYS');
    expect(refusal({ OBSERVATORY_BACKUP_S3_BUCKET: 'ab' })).toBe('OBSERVATORY_BACKUP_S3_BUCKET');
    expect(refusal({ OBSERVATORY_BACKUP_S3_BUCKET: 'bucket', OBSERVATORY_BACKUP_S3_ENDPOINT: 'ftp://x' })).toBe('OBSERVATORY_BACKUP_S3_ENDPOINT');
    expect(refusal({ OBSERVATORY_BACKUP_S3_BUCKET: 'bucket', OBSERVATORY_BACKUP_S3_ACCESS_KEY_ID: 'id' })).toBe('OBSERVATORY_BACKUP_S3_SECRET_ACCESS_KEY');
    expect(refusal({ OBSERVATORY_BACKUP_S3_BUCKET: 'bucket', OBSERVATORY_BACKUP_S3_SECRET_ACCESS_KEY: 'secret' })).toBe('OBSERVATORY_BACKUP_S3_ACCESS_KEY_ID');
  });

  it('S3: path-style by default only with an endpoint; region us-east-1; prefix empty', () => {
    expect(load({ OBSERVATORY_BACKUP_S3_BUCKET: 'obs-backups' }).s3).toEqual({
      bucket: 'obs-backups',
      prefix: '',
      endpoint: null,
      region: 'us-east-1',
      accessKeyId: null,
      secret: null,
      forcePathStyle: false,
    });
    const compatible = load({
      OBSERVATORY_BACKUP_S3_BUCKET: 'obs-backups',
      OBSERVATORY_BACKUP_S3_ENDPOINT: 'http://127.0.0.1:9000',
      OBSERVATORY_BACKUP_S3_ALLOW_HTTP: '1',
      OBSERVATORY_BACKUP_S3_PREFIX: 'prod/',
      OBSERVATORY_BACKUP_S3_REGION: 'eu-central-1',
      OBSERVATORY_BACKUP_S3_ACCESS_KEY_ID: 'minio',
      OBSERVATORY_BACKUP_S3_SECRET_ACCESS_KEY: 'minio-secret-value',
    }).s3;
    expect(compatible).toMatchObject({ endpoint: 'http://127.0.0.1:9000', prefix: 'prod/', region: 'eu-central-1', forcePathStyle: true, accessKeyId: 'minio', secret: 'minio-secret-value' });
    expect(load({ OBSERVATORY_BACKUP_S3_BUCKET: 'obs-backups', OBSERVATORY_BACKUP_S3_ENDPOINT: 'https://s3.example.com', OBSERVATORY_BACKUP_S3_FORCE_PATH_STYLE: '0' }).s3?.forcePathStyle).toBe(false);
  });

  it('S3: refuses an http: endpoint, naming the variable in one line, unless OBSERVATORY_BACKUP_S3_ALLOW_HTTP says it is a lab', () => {
    const plain = { OBSERVATORY_BACKUP_S3_BUCKET: 'obs-backups', OBSERVATORY_BACKUP_S3_ENDPOINT: 'http://minio.internal:9000' };
    expect(refusal(plain)).toBe('OBSERVATORY_BACKUP_S3_ENDPOINT');
    expect(() => load(plain)).toThrow(/^OBSERVATORY_BACKUP_S3_ENDPOINT: is http:, which sends every snapshot unencrypted; use https, or set OBSERVATORY_BACKUP_S3_ALLOW_HTTP=1 for a lab$/);
    expect(refusal({ ...plain, OBSERVATORY_BACKUP_S3_ENDPOINT: 'HTTP://minio.internal:9000' })).toBe('OBSERVATORY_BACKUP_S3_ENDPOINT');
    expect(refusal({ ...plain, OBSERVATORY_BACKUP_S3_ALLOW_HTTP: 'maybe' })).toBe('OBSERVATORY_BACKUP_S3_ALLOW_HTTP');
    expect(load({ ...plain, OBSERVATORY_BACKUP_S3_ALLOW_HTTP: '1' }).s3?.endpoint).toBe('http://minio.internal:9000');
    expect(load({ ...plain, OBSERVATORY_BACKUP_S3_ENDPOINT: 'https://minio.internal:9000' }).s3?.endpoint).toBe('https://minio.internal:9000');
  });
});

describe('cross-toolset configuration', () => {
  const crossToolset = (env: Record<string, string>) => loadConfig(env, false).crossToolset;

  it('waits two minutes for each toolset, asks each at most every 10 minutes and sends the bridge token to no host unless listed', () => {
    expect(crossToolset({})).toEqual({ timeoutMs: 120_000, peerHosts: [], minIntervalSec: 600 });
    expect(crossToolset({ OBSERVATORY_BRIDGE_MIN_INTERVAL_SEC: '3600' }).minIntervalSec).toBe(3600);
    for (const bad of ['0', '59', '86401', 'ten']) expect(() => crossToolset({ OBSERVATORY_BRIDGE_MIN_INTERVAL_SEC: bad }), bad).toThrow(/^OBSERVATORY_BRIDGE_MIN_INTERVAL_SEC: /);
  });

  it('reads the peer hosts as lower-cased names or addresses, once each', () => {
    expect(crossToolset({ OBSERVATORY_BRIDGE_PEER_HOSTS: ' Obs-EU.example.com,10.0.0.7, [::1] ,obs-eu.example.com,' }).peerHosts).toEqual([
      'obs-eu.example.com',
      '10.0.0.7',
      '[::1]',
    ]);
  });

  it('refuses a peer host that is not a host name or address', () => {
    for (const bad of ['https://obs.example.com', 'obs.example.com:443', 'bad host', '-obs.example.com', '::1']) {
      expect(() => crossToolset({ OBSERVATORY_BRIDGE_PEER_HOSTS: bad }), bad).toThrow(ConfigError);
    }
  });
});
