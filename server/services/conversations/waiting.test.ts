import { eq, sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { db } from '@/server/db/client';
import { conversations, messages } from '@/db/schema';
import { addNote } from '@/server/services/conversations/messages';
import { setConversationStatus } from '@/server/services/conversations';
import { createClient, createSmsNumber } from '@/server/testing/factories';
import { postJson, restTenant, type RestTenant } from '@/server/testing/http';
import { inboundSmsForm, postTwilio, TWILIO_PATHS } from '@/server/testing/webhooks';
import { WAITING_EFFECT, waitingEffect, waitingForReply } from './waiting';

/**
 * Waiting for a reply (docs/api.md#waiting-for-a-reply), through the real write paths: the client's
 * text starts it, notes, automatic answers and messages scheduled for later leave it, a reply (from
 * the inbox, the API or recorded from another system) ends it, and only an open conversation waits.
 */

let t: RestTenant;
let number: string;
beforeAll(async () => {
  t = await restTenant();
  number = (await createSmsNumber(t.business.id)).phoneNumber;
});

let n = 0;
async function newClient() {
  const client = await createClient(t.business.id, { phoneNumber: `+1415${String(4_200_000 + n++)}` });
  return client;
}
const clientTexts = (phone: string, body: string) => postTwilio(TWILIO_PATHS.smsIncoming, inboundSmsForm(number, phone, body));
const reply = (phone: string, extra: Record<string, unknown> = {}) =>
  postJson(`${t.base}/sms`, t.key, { sender_type: 'staff', messages: [{ to_number: phone, message: 'On it' }], ...extra });

async function waitingOf(clientId: number) {
  const [row] = await db
    .select({
      id: conversations.id,
      since: conversations.waitingSince,
      waiting: sql<boolean>`${waitingForReply(sql.raw('conversations'))}`,
    })
    .from(conversations)
    .where(eq(conversations.clientId, clientId));
  return row!;
}

describe('waiting for a reply', () => {
  it('starts at the client’s first text after a reply and ends at the next reply; notes, HELP and scheduled texts change nothing', async () => {
    const client = await newClient();
    const phone = client.phoneNumber!;
    expect((await clientTexts(phone, 'Can I move my 3pm?')).status).toBe(200);
    const first = await waitingOf(client.id);
    expect(first.waiting).toBe(true);
    const [firstText] = await db.select({ sentAt: messages.sentAt }).from(messages).where(eq(messages.clientId, client.id));
    expect(first.since?.getTime()).toBe(firstText!.sentAt.getTime());

    // A second text keeps the first's time.
    await clientTexts(phone, 'Or 4pm?');
    expect((await waitingOf(client.id)).since?.getTime()).toBe(first.since?.getTime());

    // A note, HELP's automatic answer and a text scheduled for tomorrow do not answer.
    await addNote(t.business.id, first.id, 'She called too', t.owner.id);
    await clientTexts(phone, 'HELP');
    const later = new Date(Date.now() + 86_400_000).toISOString();
    expect((await reply(phone, { send_at: later })).status).toBeLessThan(300);
    // Sent as the system (an integration's reminder; the missed-call and after-hours texts go so too).
    expect((await reply(phone, { sender_type: 'system', category: 'transactional' })).status).toBeLessThan(300);
    expect((await waitingOf(client.id)).since?.getTime()).toBe(first.since?.getTime());
    const automatic = await db.execute(
      sql`select 1 from messages where client_id = ${client.id} and direction = 'outbound' and sender_type = 'system' and message_type = 'TEXT'`,
    );
    expect(automatic.length).toBe(2);

    // A reply ends it; the client's next text starts it again, at that text.
    expect((await reply(phone)).status).toBeLessThan(300);
    expect(await waitingOf(client.id)).toMatchObject({ waiting: false, since: null });
    await clientTexts(phone, 'Thanks!');
    const again = await waitingOf(client.id);
    expect(again.waiting).toBe(true);
    expect(again.since!.getTime()).toBeGreaterThan(first.since!.getTime());

    // Resolved, it does not wait; reopened by the client, it waits since their first unanswered text.
    await setConversationStatus(t.business.id, again.id, { status: 'resolved' }, t.owner.id);
    expect((await waitingOf(client.id)).waiting).toBe(false);
    await clientTexts(phone, 'One more thing');
    expect(await waitingOf(client.id)).toMatchObject({ waiting: true, since: again.since });
  });

  it('ends at a reply another system recorded, and a conversation whose first message is the client’s starts waiting', async () => {
    const phone = `+1415${String(4_300_000 + n++)}`;
    await clientTexts(phone, 'Hi, are you open Sunday?');
    const [client] = await db.execute<{ id: number }>(
      sql`select id from clients where business_id = ${t.business.id} and phone_number = ${phone}`,
    );
    expect((await waitingOf(client!.id)).waiting).toBe(true);
    const recorded = await postJson(`${t.base}/sms`, t.key, {
      mode: 'record',
      sender_type: 'staff',
      messages: [{ to_number: phone, message: 'Yes, 10 to 4', status: 'delivered' }],
    });
    expect(recorded.status).toBeLessThan(300);
    expect((await waitingOf(client!.id)).waiting).toBe(false);
  });

  it('a conversation created by an outbound text does not wait', async () => {
    const phone = `+1415${String(4_400_000 + n++)}`;
    expect((await reply(phone)).status).toBeLessThan(300);
    const [client] = await db.execute<{ id: number }>(
      sql`select id from clients where business_id = ${t.business.id} and phone_number = ${phone}`,
    );
    expect(await waitingOf(client!.id)).toMatchObject({ waiting: false, since: null });
  });

  it('WAITING_EFFECT, the SQL the insert returns, agrees with waitingEffect for every kind of row', async () => {
    const kinds = ['TEXT', 'EMAIL', 'CALL', 'NOTE'] as const;
    const rows = kinds.flatMap((messageType) =>
      (['inbound', 'outbound'] as const).flatMap((direction) =>
        (['staff', 'system', 'client'] as const).flatMap((senderType) =>
          (['queued', 'scheduled', 'canceled', 'delivered'] as const).map((status) => ({
            messageType,
            direction,
            senderType,
            status,
          })),
        ),
      ),
    );
    const values = sql.join(
      rows.map((r) => sql`(${r.messageType}, ${r.direction}, ${r.senderType}, ${r.status})`),
      sql`, `,
    );
    const fromSql = await db.execute<{ waiting: string | null }>(
      sql`select ${WAITING_EFFECT} as waiting from (values ${values}) as v(message_type, direction, sender_type, status)`,
    );
    expect(fromSql.map((r) => r.waiting)).toEqual(rows.map(waitingEffect));
    expect(new Set(fromSql.map((r) => r.waiting))).toEqual(new Set(['client', 'reply', null]));
  });
});
