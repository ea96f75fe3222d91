import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';

/**
 * A benchmark's helper process (bench:events' stream readers, bench:presence's staff): `file` forked
 * with `flag` and this process's flags (tsx's loader), a direct child that exits when this one does.
 * `ask` sends a command and resolves with the first answer of the given type.
 */
export function forkChild<To, From extends { type: string }>(file: string, flag: string) {
  const child: ChildProcess = fork(path.resolve(file), [flag], {
    execArgv: process.execArgv,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const waiting: { type: string; resolve: (m: From) => void }[] = [];
  child.on('message', (m: From) => {
    const i = waiting.findIndex((w) => w.type === m.type);
    if (i >= 0) waiting.splice(i, 1)[0]!.resolve(m);
  });
  const ask = <T extends From>(m: To, type: T['type']) =>
    new Promise<T>((resolve, reject) => {
      waiting.push({ type, resolve: resolve as (m: From) => void });
      child.send(m as object, (err) => err && reject(err));
    });
  return { child, ask };
}
