import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';

/**
 * Ed25519 signature checks on worker threads. One check costs about 60 µs of CPU, which on the
 * HTTP thread would cap a signed ingest near 15,000 events a second before any other work; a
 * worker takes them off that thread. `threads: 0` checks inline (tests, a single core).
 */

export interface SignatureCheck {
  /** Standard base64 of the raw 32-byte public key (already validated at registration). */
  publicKeyB64: string;
  message: Buffer;
  /** Standard base64 of the 64-byte signature; anything else does not verify. */
  signatureB64: string;
}

export interface Ed25519Verifier {
  /** Whether each signature verifies, in order. Never rejects for a bad key or signature. */
  verifyMany(checks: readonly SignatureCheck[]): Promise<boolean[]>;
  close(): Promise<void>;
}

const CHECK_FILE = fileURLToPath(new URL('./ed25519-check.cjs', import.meta.url));
const checks = createRequire(import.meta.url)(CHECK_FILE) as {
  check(c: SignatureCheck): boolean;
  canonicalBase64Bytes(text: string): Buffer | null;
};
const { check } = checks;

/** One check on the calling thread (about 60 µs): for a handful of signatures, not a batch. */
export const verifyEd25519 = (c: SignatureCheck): boolean => check(c);

/**
 * The bytes of `text` when it is canonical RFC 4648 base64 (standard alphabet, padded, no
 * whitespace, unused bits zero: the one spelling that re-encodes to itself); otherwise null.
 */
export const canonicalBase64Bytes = checks.canonicalBase64Bytes;

export function createEd25519Verifier(options: { threads: number }): Ed25519Verifier {
  if (options.threads === 0) {
    return { verifyMany: async (checks) => checks.map(check), close: async () => {} };
  }
  let nextId = 0;
  type Pending = { list: readonly SignatureCheck[]; resolve: (r: boolean[]) => void };
  const workers = Array.from({ length: options.threads }, () => {
    const state = { worker: new Worker(CHECK_FILE), alive: true, pending: new Map<number, Pending>() };
    state.worker.unref();
    state.worker.on('message', ({ id, results }: { id: number; results: boolean[] }) => {
      state.pending.get(id)?.resolve(results);
      state.pending.delete(id);
    });
    // A worker that dies (or is stopped) hands what it held to the inline check: no request fails for it.
    const die = () => {
      state.alive = false;
      for (const p of state.pending.values()) p.resolve(p.list.map(check));
      state.pending.clear();
    };
    state.worker.on('error', die);
    state.worker.on('exit', die);
    return state;
  });
  let turn = 0;
  return {
    verifyMany(list) {
      if (list.length === 0) return Promise.resolve([]);
      const alive = workers.filter((w) => w.alive);
      if (alive.length === 0) return Promise.resolve(list.map(check));
      const state = alive[turn++ % alive.length]!;
      const id = nextId++;
      return new Promise((resolve) => {
        state.pending.set(id, { list, resolve });
        state.worker.postMessage({ id, checks: list });
      });
    },
    async close() {
      await Promise.all(workers.map((w) => w.worker.terminate()));
    },
  };
}
