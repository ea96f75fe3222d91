import { createHash } from 'node:crypto';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { stageBeforeMigration, type MigrationStage } from './migration-stage';

/**
 * Migration 0022 moves the uploads' bytes into media_contents, once per business and content,
 * counts them in media_storage, and marks the uploads a message already names as attached: a
 * database is migrated up to the one before (a copy of the migrations folder whose journal stops
 * there), given uploads and a message, then migrated to the end.
 */
let stage: MigrationStage | undefined;
afterAll(() => stage?.drop());

const hex = (b: Buffer) => createHash('sha256').update(b).digest('hex');

describe('migration 0022 (media_contents, media_storage, attached_at)', () => {
  it('keeps each business’s distinct bytes once, counts them, and marks the uploads a message names as attached', async () => {
    stage = await stageBeforeMigration(inject('adminDatabaseUrl'), 22);
    const one = Buffer.from('GIF89a one');
    const two = Buffer.from('GIF89a two, longer');
    const { sql } = stage;
    const [a] = await sql<{ id: number }[]>`insert into businesses (name, timezone) values ('A', 'UTC') returning id`;
    const [b] = await sql<{ id: number }[]>`insert into businesses (name, timezone) values ('B', 'UTC') returning id`;
    const upload = async (business: number, bytes: Buffer) => {
      const [row] = await sql<{ id: number }[]>`
        insert into media_uploads (business_id, content_type, size_bytes, sha256, bytes, uploaded_by)
        values (${business}, 'image/gif', ${bytes.length}, ${hex(bytes)}, ${bytes}, 'platform') returning id`;
      return row!.id;
    };
    const ids: Record<string, number> = {
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
    const after = await stage.migrateToEnd();
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
  });
});
