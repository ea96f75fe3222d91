import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { startEmbeddedPostgres } from '@/db/embedded';
import { parseEnv } from '@/server/env';

const DATA_DIR = path.resolve(process.env.DATA_DIR ?? '.data');
const EMBEDDED_PORT = Number(process.env.EMBEDDED_PG_PORT ?? 54329);

type DatabaseHandle = { url: string; embedded: boolean; stop: () => Promise<void> };

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

/**
 * DATABASE_URL when set; otherwise the embedded PostgreSQL under .data/pg, started here (or reused
 * when another command of this project already runs it, e.g. `db:migrate` beside `dev`).
 */
export async function ensureDatabase(log: (line: string) => void = () => {}): Promise<DatabaseHandle> {
  parseEnv(process.env); // a malformed variable (DATABASE_URL included) stops here, named
  if (process.env.DATABASE_URL) {
    await assertReachable(process.env.DATABASE_URL);
    return { url: process.env.DATABASE_URL, embedded: false, stop: async () => {} };
  }
  const dataDir = path.join(DATA_DIR, 'pg');
  const url = `postgres://postgres:postgres@127.0.0.1:${EMBEDDED_PORT}/messaging`;
  if (existsSync(path.join(dataDir, 'postmaster.pid')) && (await listening(EMBEDDED_PORT))) {
    return { url, embedded: true, stop: async () => {} };
  }
  const pg = await startEmbeddedPostgres({ dataDir, port: EMBEDDED_PORT, log });
  return { url: pg.url, embedded: true, stop: pg.stop };
}

type DevSecrets = { platformApiKey: string; sessionSecret: string };

/** Development only: generated once, kept in .data/ (git-ignored), reused on every start. */
export function developmentSecrets(): DevSecrets {
  const file = path.join(DATA_DIR, 'dev-secrets.json');
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as DevSecrets;
  const secrets = {
    platformApiKey: `pk_dev_${randomBytes(24).toString('base64url')}`,
    sessionSecret: randomBytes(32).toString('base64url'),
  };
  mkdirSync(DATA_DIR, { recursive: true });
  writeFileSync(file, JSON.stringify(secrets, null, 2), { mode: 0o600 });
  return secrets;
}

/** Connects once so a wrong DATABASE_URL fails at start with a sentence, not a stack trace. */
async function assertReachable(url: string): Promise<void> {
  const { createSql } = await import('@/db/connect');
  const sql = createSql(url, { max: 1, connect_timeout: 5 });
  try {
    await sql`select 1`;
  } catch (err) {
    const where = (() => {
      try {
        const u = new URL(url);
        return `${u.hostname}:${u.port || 5432}/${u.pathname.slice(1)} as ${u.username || '(default user)'}`;
      } catch {
        return '(unparsable URL)';
      }
    })();
    const reason = (err as { code?: string }).code ?? (err as Error).message;
    throw new Error(`Cannot connect to PostgreSQL at ${where} (DATABASE_URL): ${reason} — ${(err as Error).message}`);
  } finally {
    await sql.end({ timeout: 1 }).catch(() => {});
  }
}
