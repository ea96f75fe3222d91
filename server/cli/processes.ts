import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

const bin = (name: string) => path.resolve('node_modules', '.bin', name);

/** Runs the web and worker processes side by side; when one exits, the other is stopped too. */
export function runProcesses(
  commands: { name: string; command: string; args: string[] }[],
  env: NodeJS.ProcessEnv,
  onExit: (code: number) => Promise<void>,
): ChildProcess[] {
  const children = commands.map(({ command, args }) => spawn(bin(command), args, { stdio: 'inherit', env }));
  let exiting = false;
  const shutdown = async (code: number) => {
    if (exiting) return;
    exiting = true;
    for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
    await Promise.all(
      children.map((child) => (child.exitCode !== null ? undefined : new Promise((r) => child.once('exit', r)))),
    );
    await onExit(code);
    process.exit(code);
  };
  children.forEach((child, i) =>
    child.once('exit', (code) => {
      if (!exiting) console.error(`[${commands[i]!.name}] exited with code ${code}`);
      void shutdown(code ?? 1);
    }),
  );
  process.on('SIGINT', () => void shutdown(0));
  process.on('SIGTERM', () => void shutdown(0));
  return children;
}
