import { randomBytes } from 'node:crypto';
import { afterAll, inject } from 'vitest';
import { createSql } from '@/db/connect';
import { closeDb } from '@/server/db/client';

/**
 * Per test file, before it is imported: a private copy of the migrated template database, named in
 * DATABASE_URL so `db` (and everything built on it) uses it. Dropped when the file is done.
 */
const adminUrl = inject('adminDatabaseUrl');
const template = inject('templateDatabase');
const name = `msg_test_${randomBytes(6).toString('hex')}`;
const admin = createSql(adminUrl, { max: 1 });

for (let attempt = 0; ; attempt++) {
  try {
    await admin.unsafe(`create database "${name}" template "${template}"`);
    break;
  } catch (err) {
    // Two files copying the template at the same instant can collide; try again shortly.
    if (attempt >= 10) throw err;
    await new Promise((r) => setTimeout(r, 100 + Math.random() * 200));
  }
}

const url = new URL(adminUrl);
url.pathname = `/${name}`;
process.env.DATABASE_URL = url.toString();

afterAll(async () => {
  await closeDb();
  await admin.unsafe(`drop database if exists "${name}" with (force)`);
  await admin.end({ timeout: 5 });
});
