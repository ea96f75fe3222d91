import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '@/db/embedded';

/**
 * A real PgBouncer for tests (Debian: `apt-get install -y pgbouncer`), in front of the test
 * PostgreSQL. Every database name is forwarded (`* =`), so each test file's private database works.
 */

export type PgBouncer = {
  /** A URL for `database` through PgBouncer, as the user of the server URL. */
  url: (database: string) => string;
  /** The admin console (`SHOW POOLS`, `SHOW SERVERS`), simple-query protocol only. */
  adminUrl: string;
  log: () => string;
  stop: () => Promise<void>;
};

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

const quote = (v: string) => `"${v.replace(/"/g, '""')}"`;

export async function startPgBouncer(options: {
  binary: string;
  /** Any URL of the PostgreSQL server to front (its host, port, user and password are used). */
  serverUrl: string;
  poolMode?: 'transaction' | 'session';
  poolSize: number;
}): Promise<PgBouncer> {
  const server = new URL(options.serverUrl);
  const user = decodeURIComponent(server.username || 'postgres');
  const password = decodeURIComponent(server.password);
  const port = await freePort();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pgbouncer-test-'));
  // PgBouncer refuses to run as root; as root it drops to `nobody`, which must read these files.
  chmodSync(dir, 0o755);
  const ini = path.join(dir, 'pgbouncer.ini');
  const users = path.join(dir, 'users.txt');
  writeFileSync(users, `${quote(user)} ${quote(password)}\n`, { mode: 0o644 });
  writeFileSync(
    ini,
    [
      '[databases]',
      `* = host=${server.hostname.replace(/^\[|\]$/g, '')} port=${server.port || 5432}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      // Clients are not authenticated (a test); PgBouncer logs in to PostgreSQL with users.txt.
      'auth_type = trust',
      `auth_file = ${users}`,
      `admin_users = ${user}`,
      `pool_mode = ${options.poolMode ?? 'transaction'}`,
      `default_pool_size = ${options.poolSize}`,
      'min_pool_size = 0',
      'reserve_pool_size = 0',
      'max_client_conn = 500',
      // node-postgres (pg-boss) may send it; PgBouncer 1.18 refuses unknown startup parameters.
      'ignore_startup_parameters = extra_float_digits',
      '',
    ].join('\n'),
    { mode: 0o644 },
  );
  const args = process.getuid?.() === 0 ? ['-u', 'nobody', ini] : [ini];
  const child: ChildProcess = spawn(options.binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stdout!.on('data', (d: Buffer) => (log += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (log += d.toString()));
  let exited = false;
  child.once('exit', () => (exited = true));

  const deadline = Date.now() + 10_000;
  while (!(await portOpen(port))) {
    if (exited || Date.now() > deadline) {
      child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`pgbouncer did not start:\n${log}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }

  const url = (database: string) => {
    const u = new URL(`postgres://127.0.0.1:${port}/${encodeURIComponent(database)}`);
    u.username = server.username || 'postgres';
    if (server.password) u.password = server.password;
    return u.toString();
  };
  return {
    url,
    adminUrl: url('pgbouncer'),
    log: () => log,
    async stop() {
      if (!exited) {
        const gone = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM'); // immediate shutdown (1.18); SIGINT would wait for clients to leave
        await Promise.race([gone, new Promise((r) => setTimeout(r, 3000))]);
        if (!exited) child.kill('SIGKILL');
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
