import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

/**
 * The worker (`workers/index.ts`) as a real child process, for tests that kill or outlive it.
 *
 * `tsx` runs the script in a child `node` of its own, so the worker is started in a process group
 * of its own (`detached`) and every signal goes to the whole group: a SIGKILL kills the real worker,
 * not only the tsx wrapper (which would leave the worker running as an orphan).
 */
export type WorkerProcess = {
  readonly pid: number;
  readonly child: ChildProcess;
  /** Everything the process wrote to stdout and stderr so far (pino JSON lines). */
  output(): string;
  /** True until the process (group leader) has exited. */
  alive(): boolean;
  /** Resolves with the exit code (null when killed by a signal) and the signal. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Sends `signal` to the whole process group, synchronously. No-op once it has exited. */
  kill(signal?: NodeJS.Signals): void;
  /** SIGTERM (drain), then SIGKILL after `timeoutMs`; resolves with the exit. */
  stop(timeoutMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
};

const ROOT = path.resolve(import.meta.dirname, '../..');

export async function startWorkerProcess(
  env: Record<string, string | undefined>,
  options: { readyTimeoutMs?: number } = {},
): Promise<WorkerProcess> {
  const child = spawn(path.join(ROOT, 'node_modules/.bin/tsx'), ['workers/index.ts'], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  let done = false;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      done = true;
      resolve({ code, signal });
    }),
  );
  const pid = child.pid!;

  const kill = (signal: NodeJS.Signals = 'SIGTERM') => {
    try {
      process.kill(-pid, signal);
    } catch {
      // already gone
    }
  };

  const worker: WorkerProcess = {
    pid,
    child,
    output: () => out,
    alive: () => !done,
    exited,
    kill,
    async stop(timeoutMs = 15_000) {
      if (done) {
        kill('SIGKILL'); // any straggler of the group
        return exited;
      }
      kill('SIGTERM');
      const timer = setTimeout(() => kill('SIGKILL'), timeoutMs);
      const result = await exited;
      clearTimeout(timer);
      return result;
    },
  };

  const deadline = Date.now() + (options.readyTimeoutMs ?? 30_000);
  while (!out.includes('worker started')) {
    if (done || Date.now() > deadline) {
      kill('SIGKILL');
      throw new Error(`worker process did not start:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return worker;
}
