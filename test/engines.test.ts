import { readFileSync } from 'node:fs';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

/**
 * One Node: every package in the lock file accepts the Node line package.json declares, so `npm ci`
 * installs without an `EBADENGINE` warning and no dependency runs on a Node it does not support
 * (docs/operations.md "Node versions"). A package whose `engines.node` excludes the oldest Node the
 * service declares fails here, optional ones included: npm skips an optional package whose engines
 * do not match, so the lock would then promise something that is not installed.
 */

interface LockEntry {
  version?: string;
  engines?: Record<string, string> | string[];
  optional?: boolean;
}

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(readFileSync(new URL('../package-lock.json', import.meta.url), 'utf8')) as {
  packages: Record<string, LockEntry>;
};

/** The Node versions the service must run on: the oldest it declares, and the one running the tests. */
function declaredNodes(): string[] {
  const oldest = semver.minVersion(pkg.engines.node);
  if (!oldest) throw new Error(`package.json engines.node "${pkg.engines.node}" admits no version`);
  return [oldest.version, process.versions.node];
}

/** Every lock entry whose `engines.node` excludes one of the given Node versions. */
export function excludedBy(nodes: readonly string[], packages: Record<string, LockEntry>): string[] {
  const out: string[] = [];
  for (const [path, entry] of Object.entries(packages)) {
    if (path === '') continue;
    const range = entry.engines && !Array.isArray(entry.engines) ? entry.engines.node : undefined;
    if (!range) continue;
    for (const node of nodes) {
      if (!semver.satisfies(node, range)) {
        out.push(`${path.replace(/^.*node_modules\//, '')}@${entry.version} wants node ${range}, not ${node}${entry.optional ? ' (optional: npm would skip it)' : ''}`);
      }
    }
  }
  return out;
}

describe('dependency engines', () => {
  it('package.json declares Node 20.19 or later, and the tests run on a declared Node', () => {
    expect(semver.minVersion(pkg.engines.node)?.version).toBe('20.19.0');
    expect(semver.satisfies(process.versions.node, pkg.engines.node)).toBe(true);
  });

  it('every locked package accepts the declared Node', () => {
    expect(excludedBy(declaredNodes(), lock.packages)).toEqual([]);
  });

  it('the check names a package that wants a newer Node', () => {
    const found = excludedBy(['20.19.0'], {
      '': {},
      'node_modules/ok': { version: '1.0.0', engines: { node: '>=18' } },
      'node_modules/x/node_modules/newer': { version: '2.0.0', engines: { node: '>=22' } },
      'node_modules/legacy-array': { version: '1.0.0', engines: ['node >= 0.8'] },
    });
    expect(found).toEqual(['newer@2.0.0 wants node >=22, not 20.19.0']);
  });
});
