import { afterAll, describe, expect, inject, it } from 'vitest';
import { stageBeforeMigration, type MigrationStage } from './migration-stage';

/**
 * Migration 0035 gives the conversations that exist their `waiting_since` (docs/api.md#waiting-for-a-reply):
 * the client's first text or email after the last reply, when one came after it. Notes, automatic
 * answers (sender `system`), calls and texts scheduled for later are not replies.
 */
let stage: MigrationStage | undefined;
afterAll(() => stage?.drop());

describe('migration 0035 (conversations.waiting_since)', () => {
  it('sets it from the first unanswered client message, and leaves answered and outbound-only conversations null', async () => {
    stage = await stageBeforeMigration(inject('adminDatabaseUrl'), 35);
    const { sql } = stage;
    const [b] = await sql<{ id: number }[]>`insert into businesses (name, timezone) values ('A', 'UTC') returning id`;
    const conversation = async (
      name: string,
      messages: [direction: string, type: string, sender: string, status: string, minute: number][],
    ) => {
      const [client] = await sql<
        { id: number }[]
      >`insert into clients (business_id, name) values (${b!.id}, ${name}) returning id`;
      const [conv] = await sql<{ id: number }[]>`
        insert into conversations (business_id, client_id) values (${b!.id}, ${client!.id}) returning id`;
      for (const [direction, type, sender, status, minute] of messages) {
        await sql`
          insert into messages (business_id, conversation_id, client_id, channel, direction, message_type, sender_type, status, origin, sent_at)
          values (${b!.id}, ${conv!.id}, ${client!.id}, ${type === 'NOTE' ? null : type === 'EMAIL' ? 'email' : 'sms'}, ${direction}, ${type},
            ${sender}, ${status}, ${direction === 'inbound' ? 'webhook' : 'send'}, ${new Date(Date.UTC(2026, 0, 1, 10, minute)).toISOString()})`;
      }
      return name;
    };
    await conversation('answered', [
      ['inbound', 'TEXT', 'client', 'received', 0],
      ['outbound', 'TEXT', 'staff', 'delivered', 5],
    ]);
    await conversation('asked again', [
      ['inbound', 'TEXT', 'client', 'received', 0],
      ['outbound', 'EMAIL', 'staff', 'sent', 5],
      ['inbound', 'EMAIL', 'client', 'received', 10],
      ['outbound', 'NOTE', 'staff', 'sent', 11],
      ['outbound', 'TEXT', 'system', 'queued', 12],
      ['outbound', 'TEXT', 'staff', 'scheduled', 13],
      ['inbound', 'TEXT', 'client', 'received', 14],
    ]);
    await conversation('never answered', [
      ['inbound', 'CALL', 'client', 'completed', 1],
      ['inbound', 'TEXT', 'client', 'received', 2],
    ]);
    await conversation('outbound only', [['outbound', 'TEXT', 'staff', 'delivered', 3]]);

    const after = await stage.migrateToEnd();
    const rows = await after<{ name: string; since: Date | null }[]>`
      select cl.name, c.waiting_since as since from conversations c join clients cl on cl.id = c.client_id order by cl.name`;
    const at = (minute: number) => new Date(Date.UTC(2026, 0, 1, 10, minute));
    expect(Object.fromEntries(rows.map((r) => [r.name, r.since]))).toEqual({
      answered: null,
      'asked again': at(10),
      'never answered': at(2),
      'outbound only': null,
    });
  });
});
