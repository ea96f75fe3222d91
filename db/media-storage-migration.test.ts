import { createHash, randomBytes } from 'node:crypto';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { drizzle } from 'drizzle-orm/postgres-js';
import { migrate } from 'drizzle-orm/postgres-js/migrator';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createSql } from './client';
import { migrateDatabase } from './migrate';

/**
 * Migration 0022 moves the uploads' bytes into media_contents, once per business and content,
 * counts them in media_storage, and marks the uploads a message already names as attached: a
 * database is migrated up to the one before (a copy of the migrations folder whose journal stops
 * there), given uploads and a message, then migrated to the end.
 */
const migrations = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');
const admin = createSql(inject('adminDatabaseUrl'), { max: 1 });
const name = `msg_media_${randomBytes(4).toString('hex')}`;
const url = (() => {
  const u = new URL(inject('adminDatabaseUrl'));
  u.pathname = `/${name}`;
  return u.toString();
})();
let folder: string | null = null;

afterAll(async () => {
  await admin.unsafe(`drop database if exists "${name}" with (force)`);
  await admin.end();
  if (folder) await rm(folder, { recursive: true, force: true });
});

const hex = (b: Buffer) => createHash('sha256').update(b).digest('hex');

describe('migration 0022 (media_contents, media_storage, attached_at)', () => {
  it('keeps each business’s distinct bytes once, counts them, and marks the uploads a message names as attached', async () => {
    folder = await mkdtemp(path.join(os.tmpdir(), 'migrations-0021-'));
    await cp(migrations, folder, { recursive: true });
    const journalPath = path.join(folder, 'meta', '_journal.json');
    const journal = JSON.parse(await readFile(journalPath, 'utf8')) as { entries: { idx: number }[] };
    journal.entries = journal.entries.filter((e) => e.idx < 22);
    await writeFile(journalPath, JSON.stringify(journal));

    const one = Buffer.from('GIF89a one');
    const two = Buffer.from('GIF89a two, longer');
    await admin.unsafe(`create database "${name}"`);
    const sql = createSql(url, { max: 1 });
    let ids: Record<string, number> = {};
    try {
      await migrate(drizzle(sql), { migrationsFolder: folder });
      const [a] = await sql<{ id: number }[]>`insert into businesses (name, timezone) values ('A', 'UTC') returning id`;
      const [b] = await sql<{ id: number }[]>`insert into businesses (name, timezone) values ('B', 'UTC') returning id`;
      const upload = async (business: number, bytes: Buffer) => {
        const [row] = await sql<{ id: number }[]>`
          insert into media_uploads (business_id, content_type, size_bytes, sha256, bytes, uploaded_by)
          values (${business}, 'image/gif', ${bytes.length}, ${hex(bytes)}, ${bytes}, 'platform') returning id`;
        return row!.id;
      };
      ids = {
        A: a!.id,
        B: b!.id,
        sent: await upload(a!.id, one),
        again: await upload(a!.id, one),
        unsent: await upload(a!.id, two),
        other: await upload(b!.id, one),
      };
      const [client] = await sql<{ id: number }[]>`insert into clients (business_id, name) values (${ids.A!}, 'C') returning id`;
      const [conv] = await sql<{ id: number }[]>`
        insert into conversations (business_id, client_id) values (${ids.A!}, ${client!.id}) returning id`;
      const attachments = [
        { filename: 'media-0', content_type: null, url: 'https://cdn.example/a.png', size: null },
        { filename: 'one.gif', content_type: 'image/gif', url: null, size: one.length, media_id: ids.sent },
      ];
      await sql`
        insert into messages (business_id, conversation_id, client_id, channel, direction, message_type, sender_type, status, origin, attachments)
        values (${ids.A!}, ${conv!.id}, ${client!.id}, 'sms', 'outbound', 'TEXT', 'staff', 'queued', 'send', ${JSON.stringify(attachments)}::jsonb),
               (${ids.A!}, ${conv!.id}, ${client!.id}, 'sms', 'outbound', 'TEXT', 'staff', 'sent', 'send', null)`;
      await sql.end();
      await migrateDatabase(url);
    } finally {
      await sql.end().catch(() => {});
    }

    const after = createSql(url, { max: 1 });
    try {
      const contents = await after<{ business_id: number; sha256: string; bytes: Buffer }[]>`
        select business_id, sha256, bytes from media_contents order by business_id, size_bytes`;
      expect(contents.map((c) => [c.business_id, c.sha256, Buffer.from(c.bytes).toString()])).toEqual([
        [ids.A, hex(one), one.toString()],
        [ids.A, hex(two), two.toString()],
        [ids.B, hex(one), one.toString()],
      ]);
      const storage = await after<{ business_id: number; stored_bytes: string }[]>`
        select business_id, stored_bytes from media_storage order by business_id`;
      expect(storage.map((s) => [s.business_id, Number(s.stored_bytes)])).toEqual([
        [ids.A, one.length + two.length],
        [ids.B, one.length],
      ]);
      const uploads = await after<{ id: number; attached: boolean }[]>`
        select id, attached_at is not null as attached from media_uploads order by id`;
      expect(uploads.map((u) => ({ ...u }))).toEqual([
        { id: ids.sent, attached: true },
        { id: ids.again, attached: false },
        { id: ids.unsent, attached: false },
        { id: ids.other, attached: false },
      ]);
      const bytesColumn = await after`
        select 1 from information_schema.columns where table_name = 'media_uploads' and column_name = 'bytes'`;
      expect(bytesColumn).toHaveLength(0);
    } finally {
      await after.end();
    }
  });
});
