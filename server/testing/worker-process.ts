import path from 'node:path';
import { spawnProc, type Proc } from '@/server/cli/child-process';

/**
 * The worker (`workers/index.ts`) as a real child process, for tests that kill or outlive it. It
 * runs in a process group of its own (server/cli/child-process.ts), so a SIGKILL reaches the real
 * worker, not only the tsx wrapper (which would leave the worker running as an orphan).
 */
export type WorkerProcess = Proc;

const ROOT = path.resolve(import.meta.dirname, '../..');

export async function startWorkerProcess(
  env: Record<string, string | undefined>,
  options: { readyTimeoutMs?: number } = {},
): Promise<WorkerProcess> {
  const worker = spawnProc('worker', path.join(ROOT, 'node_modules/.bin/tsx'), ['workers/index.ts'], {
    env: { ...process.env, LOG_LEVEL: 'info', ...env },
  });
  const deadline = Date.now() + (options.readyTimeoutMs ?? 30_000);
  while (!worker.output().includes('worker started')) {
    if (!worker.alive() || Date.now() > deadline) {
      worker.kill('SIGKILL');
      throw new Error(`worker process did not start:\n${worker.output()}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return worker;
}
