import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** `npm start` as a real child process, for tests of start-up, signals and crashes. */
export interface Running {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
  base: string;
}

let nextPort = 18_400 + Math.floor(Math.random() * 2000);

/**
 * The Node arguments of package.json's `start` script (`node <flags> --import tsx src/main.ts`):
 * the service under test runs with the flags operators run it with (the GC settings,
 * docs/operations.md), so a flag the installed Node refuses fails here too.
 */
export function startArguments(): string[] {
  const { scripts } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { scripts: { start: string } };
  const [command, ...args] = scripts.start.trim().split(/\s+/);
  if (command !== 'node' || args.at(-1) !== 'src/main.ts') throw new Error(`the start script is not "node … src/main.ts": ${scripts.start}`);
  return args;
}

export function startService(env: Record<string, string>): Running {
  nextPort += 1;
  const port = nextPort;
  const child = spawn(process.execPath, startArguments(), {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', PORT: String(port), LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout?.on('data', (d) => (out += String(d)));
  child.stderr?.on('data', (d) => (err += String(d)));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, stdout: () => out, stderr: () => err, exited, base: `http://127.0.0.1:${port}` };
}

export async function waitReady(running: Running, timeoutMs = 150_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      if ((await fetch(`${running.base}/readyz`)).status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`never became ready: ${running.stderr()}`);
}
