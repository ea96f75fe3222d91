import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

/**
 * A child process in a process group of its own (`detached`), so that a signal can reach all of it
 * (`npm`, `tsx` and `start.ts` each run their program in a child process) or its leader alone, and
 * so that a terminal's Ctrl-C reaches only the parent, which stops its children in order.
 * Its output is kept (the last MAX_OUTPUT characters) and optionally passed on line by line.
 */
export type Proc = {
  readonly name: string;
  readonly pid: number;
  readonly child: ChildProcess;
  /** What the process wrote to stdout and stderr so far (the last 1 MB). */
  output(): string;
  /** True until the group leader has exited. */
  alive(): boolean;
  /** The leader's exit: code (null when killed by a signal) and signal, and when it happened. */
  readonly exited: Promise<ProcExit>;
  /** Sends `signal` to the whole group (default) or to the leader only. No-op once it has exited. */
  kill(signal?: NodeJS.Signals, target?: 'group' | 'leader'): void;
  /** `signal` (SIGTERM) to the group, SIGKILL after `timeoutMs`; resolves with the exit. */
  stop(timeoutMs?: number, signal?: NodeJS.Signals): Promise<ProcExit>;
};

export type ProcExit = { code: number | null; signal: NodeJS.Signals | null; at: number };

const ROOT = path.resolve(import.meta.dirname, '../..');
const MAX_OUTPUT = 1_000_000;

export function spawnProc(
  name: string,
  command: string,
  args: string[],
  options: { env: Record<string, string | undefined>; cwd?: string; onLine?: (line: string) => void },
): Proc {
  const child = spawn(command, args, {
    cwd: options.cwd ?? ROOT,
    env: options.env as NodeJS.ProcessEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let out = '';
  let partial = '';
  const collect = (d: Buffer) => {
    const text = d.toString();
    out += text;
    if (out.length > MAX_OUTPUT) out = out.slice(-MAX_OUTPUT);
    if (!options.onLine) return;
    const lines = (partial + text).split('\n');
    partial = lines.pop()!;
    for (const line of lines) if (line) options.onLine(line);
  };
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  let done = false;
  const exited = new Promise<ProcExit>((resolve) =>
    child.once('exit', (code, signal) => {
      done = true;
      resolve({ code, signal, at: Date.now() });
    }),
  );
  const pid = child.pid;
  if (pid === undefined) throw new Error(`${name}: could not start ${command}`);
  const kill = (signal: NodeJS.Signals = 'SIGTERM', target: 'group' | 'leader' = 'group') => {
    try {
      process.kill(target === 'group' ? -pid : pid, signal);
    } catch {
      // already gone
    }
  };
  return {
    name,
    pid,
    child,
    output: () => out,
    alive: () => !done,
    exited,
    kill,
    async stop(timeoutMs = 30_000, signal: NodeJS.Signals = 'SIGTERM') {
      if (done) {
        kill('SIGKILL'); // any straggler of the group
        return exited;
      }
      kill(signal);
      const timer = setTimeout(() => kill('SIGKILL'), timeoutMs);
      const result = await exited;
      clearTimeout(timer);
      return result;
    },
  };
}

/** Polls `url` until it answers 200 (or `deadlineMs` passes, or `alive()` turns false). */
export async function waitForOk(
  url: string,
  options: { timeoutMs?: number; alive?: () => boolean; what?: string } = {},
): Promise<void> {
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  for (;;) {
    // The body read is under the same 2 s signal: its timeout is a "not yet" too, not a crash.
    const ok = await fetch(url, { signal: AbortSignal.timeout(2_000) })
      .then(async (r) => (await r.arrayBuffer(), r.ok))
      .catch(() => false);
    if (ok) return;
    if (options.alive && !options.alive()) throw new Error(`${options.what ?? url}: the process exited before it answered`);
    if (Date.now() > deadline) throw new Error(`${options.what ?? url}: no 200 within ${options.timeoutMs ?? 60_000} ms`);
    await new Promise((r) => setTimeout(r, 150));
  }
}
