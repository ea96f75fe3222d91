import { randomBytes } from 'node:crypto';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { drizzle } from 'drizzle-orm/postgres-js';
import { migrate } from 'drizzle-orm/postgres-js/migrator';
import type { Sql } from 'postgres';
import { createSql } from '@/db/connect';
import { migrateSchema } from './migrate';

const MIGRATIONS = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');

export type MigrationStage = {
  /** A connection to the staged database, migrated up to the one before the migration under test. */
  sql: Sql;
  /** Closes `sql`, applies the remaining migrations as production does (migrateSchema), and opens a new connection. */
  migrateToEnd(): Promise<Sql>;
  /** Drops the database and the staged copy of the migrations; closes every connection opened here. */
  drop(): Promise<void>;
};

/**
 * For a migration's test (db/*-migration.test.ts): a database of its own on `adminUrl`'s server,
 * migrated up to, not including, migration `idx` (from a copy of the migrations folder whose
 * journal stops there), so the test can store the rows as they were before it, then migrate to the
 * end and check what the migration made of them.
 */
export async function stageBeforeMigration(adminUrl: string, idx: number): Promise<MigrationStage> {
  const admin = createSql(adminUrl, { max: 1 });
  const name = `before_${String(idx).padStart(4, '0')}_${randomBytes(4).toString('hex')}`;
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const folder = await mkdtemp(path.join(os.tmpdir(), `migrations-before-${idx}-`));
  const opened: Sql[] = [];
  const open = () => {
    const sql = createSql(url.toString(), { max: 1 });
    opened.push(sql);
    return sql;
  };

  await cp(MIGRATIONS, folder, { recursive: true });
  const journalPath = path.join(folder, 'meta', '_journal.json');
  const journal = JSON.parse(await readFile(journalPath, 'utf8')) as { entries: { idx: number }[] };
  journal.entries = journal.entries.filter((e) => e.idx < idx);
  await writeFile(journalPath, JSON.stringify(journal));
  await admin.unsafe(`create database "${name}"`);
  const sql = open();
  await migrate(drizzle(sql), { migrationsFolder: folder });

  return {
    sql,
    async migrateToEnd() {
      await sql.end();
      await migrateSchema(url.toString());
      return open();
    },
    async drop() {
      await Promise.all(opened.map((s) => s.end().catch(() => {})));
      await admin.unsafe(`drop database if exists "${name}" with (force)`);
      await admin.end();
      await rm(folder, { recursive: true, force: true });
    },
  };
}
