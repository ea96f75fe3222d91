import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres } from '@/db/embedded';
import { migrateDatabase } from '@/server/migrate';
import { createSql } from '@/db/connect';

declare module 'vitest' {
  export interface ProvidedContext {
    adminDatabaseUrl: string;
    templateDatabase: string;
  }
}

/** Database URL with another database name. */
function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

/**
 * Once per run: a PostgreSQL (embedded, or TEST_DATABASE_URL's server when set) and a template
 * database with every migration applied. Each test file then copies the template (fast) into a
 * database of its own.
 */
export default async function setup(project: TestProject) {
  let adminUrl = process.env.TEST_DATABASE_URL;
  let stop = async () => {};
  let dataDir: string | undefined;
  if (!adminUrl) {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'messaging-test-pg-'));
    chmodSync(dataDir, 0o755); // the embedded server may run as the `postgres` user
    const pg = await startEmbeddedPostgres({ dataDir: path.join(dataDir, 'pg'), database: 'postgres' });
    adminUrl = pg.url;
    stop = pg.stop;
  }
  const template = `msg_template_${process.pid}_${Date.now()}`;
  const admin = createSql(withDatabase(adminUrl, 'postgres'), { max: 1 });
  await admin.unsafe(`create database "${template}"`);
  await migrateDatabase(withDatabase(adminUrl, template));
  await admin.unsafe(`alter database "${template}" is_template true`);
  project.provide('adminDatabaseUrl', withDatabase(adminUrl, 'postgres'));
  project.provide('templateDatabase', template);

  return async () => {
    await admin.unsafe(`alter database "${template}" is_template false`).catch(() => {});
    await admin.unsafe(`drop database if exists "${template}" with (force)`).catch(() => {});
    await admin.end({ timeout: 5 });
    await stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  };
}
