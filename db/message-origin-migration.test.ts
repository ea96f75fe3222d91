import { afterAll, describe, expect, inject, it } from 'vitest';
import { stageBeforeMigration, type MigrationStage } from './migration-stage';

/**
 * Migration 0021 gives every stored message its origin (docs/api.md#record-mode). The rows that
 * matter most are the recorded ones still reading `queued`/`sending` (stored before record mode
 * refused those statuses): they must come out `record`, so the sweep never sends them. A database is
 * migrated up to 0020 (a copy of the migrations folder whose journal stops there), given one row of
 * each kind, then migrated to the end.
 */
let stage: MigrationStage | undefined;
afterAll(() => stage?.drop());

describe('migration 0021 (messages.origin)', () => {
  it('classifies inbound and calls as webhook, notes and automatic answers as system, attempt-less outbound as record, the rest as send', async () => {
    stage = await stageBeforeMigration(inject('adminDatabaseUrl'), 21);
    const { sql } = stage;
    const rows: [label: string, values: string][] = [
      ['inbound text', `'sms', 'inbound', 'TEXT', 'client', 'received', 0, null`],
      ['call', `'voice', 'outbound', 'CALL', 'staff', 'completed', 0, null`],
      ['note', `null, 'outbound', 'NOTE', 'staff', 'sent', 0, null`],
      ['automatic answer', `'sms', 'outbound', 'TEXT', 'system', 'queued', 1, null`],
      ['recorded, queued', `'sms', 'outbound', 'TEXT', 'staff', 'queued', 0, null`],
      ['recorded as system, sending', `'sms', 'outbound', 'TEXT', 'system', 'sending', 0, null`],
      ['recorded email, sending', `'email', 'outbound', 'EMAIL', 'staff', 'sending', 0, null`],
      ['recorded, delivered', `'sms', 'outbound', 'TEXT', 'staff', 'delivered', 0, null`],
      ['sent', `'sms', 'outbound', 'TEXT', 'staff', 'sent', 1, null`],
      ['sent by the API as system', `'sms', 'outbound', 'TEXT', 'system', 'queued', 1, null`],
      ['queued to send', `'email', 'outbound', 'EMAIL', 'staff', 'queued', 2, null`],
      ['refused at once: opted out', `'sms', 'outbound', 'TEXT', 'staff', 'failed', 0, 'opted_out'`],
      ['refused at once: no consent', `'sms', 'outbound', 'TEXT', 'staff', 'failed', 0, 'no_marketing_consent'`],
    ];
    const ids = new Map<number, string>();
    const [b] = await sql<{ id: number }[]>`insert into businesses (name, timezone) values ('A', 'UTC') returning id`;
    const [client] = await sql<{ id: number }[]>`insert into clients (business_id, name) values (${b!.id}, 'C') returning id`;
    const [conv] = await sql<{ id: number }[]>`
      insert into conversations (business_id, client_id) values (${b!.id}, ${client!.id}) returning id`;
    for (const [label, values] of rows) {
      const [row] = await sql.unsafe<{ id: number }[]>(`
        insert into messages (business_id, conversation_id, client_id, channel, direction, message_type, sender_type, status, attempts, error_code, provider_metadata)
        values (${b!.id}, ${conv!.id}, ${client!.id}, ${values}, ${label === 'automatic answer' ? `'{"auto_reply": "stop"}'` : 'null'}) returning id::int as id`);
      ids.set(row!.id, label);
    }
    const after = await stage.migrateToEnd();
    const origins = await after<{ id: number; origin: string }[]>`select id::int as id, origin from messages order by id`;
    expect(Object.fromEntries(origins.map((r) => [ids.get(r.id), r.origin]))).toEqual({
      'inbound text': 'webhook',
      call: 'webhook',
      note: 'system',
      'automatic answer': 'system',
      'recorded, queued': 'record',
      'recorded as system, sending': 'record',
      'recorded email, sending': 'record',
      'recorded, delivered': 'record',
      sent: 'send',
      'sent by the API as system': 'send',
      'queued to send': 'send',
      'refused at once: opted out': 'send',
      'refused at once: no consent': 'send',
    });
    // Every writer must say from now on: no default is left.
    await expect(
      after`insert into messages (business_id, conversation_id, client_id, channel, direction, message_type, sender_type, status)
            select business_id, conversation_id, client_id, 'sms', 'outbound', 'TEXT', 'staff', 'sent' from messages limit 1`,
    ).rejects.toThrow(/origin/);
  });
});
