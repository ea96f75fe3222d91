import { eq, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db } from '@/server/db/client';
import { messages } from '@/db/schema';
import { RETRYABLE_STATUSES } from '@/server/shared/message-statuses';
import { clientOptOuts, createClient, createConversation, createMessage, createTenant } from '@/server/testing/factories';
import { forwardStatusCtes, recordSendResults, startNewAttempt } from './lifecycle';

/**
 * The message lifecycle's own rules, beyond what the send, webhook and retry tests already cover
 * through the workers and the endpoints that call it.
 */

/** The status events the log holds for a business's messages (migration 0025's trigger writes them). */
async function statusEvents(businessId: number) {
  return db.execute<{ message_id: number; conversation_id: number; status: string }>(sql`
    select message_id, conversation_id, data ->> 'status' as status from events
    where business_id = ${businessId} and type = 'message.status_updated' order by id`);
}

async function conversationWithClient() {
  const t = await createTenant();
  const client = await createClient(t.business.id);
  const conversation = await createConversation(t.business.id, client.id);
  return { ...t, client, conversation };
}

describe('message lifecycle', () => {
  it('a status batch over hundreds of messages with long ids logs one status event per message, for the inbox and every reader', async () => {
    // Message ids past int4 (bigint, 13 digits) and conversation ids of 10. Later tests in this
    // file run on these large ids too.
    await db.execute(sql`select setval(pg_get_serial_sequence('messages', 'id'), 1000000000000)`);
    await db.execute(sql`select setval(pg_get_serial_sequence('conversations', 'id'), 2000000000)`);
    const t = await createTenant();
    const created = await db.execute<{ id: string }>(sql`
      with c as (
        insert into clients (business_id, name) select ${t.business.id}, 'Client ' || g from generate_series(1, 400) g returning id
      ), conv as (
        insert into conversations (business_id, client_id) select ${t.business.id}, id from c returning id, client_id
      )
      insert into messages (business_id, conversation_id, client_id, channel, direction, message_type, sender_type, content, status, origin)
      select ${t.business.id}, id, client_id, 'sms', 'outbound', 'TEXT', 'staff', 'See you Friday', 'sent', 'send' from conv
      returning id`);
    const ids = created.map((r) => Number(r.id));

    await db.execute(sql`
      with best as (
        select id, 'delivered'::text as status, null::text as error_code, null::text as error_message
        from messages where id = any(${sql.param(ids)}::bigint[])
      ), ${forwardStatusCtes(sql.raw('best'))}
      select (select count(*) from provider_actor) as provider_named`);

    const events = await statusEvents(t.business.id);
    expect(events.every((e) => e.status === 'delivered')).toBe(true);
    expect(events.map((e) => e.message_id).sort()).toEqual([...ids].sort());
    const statuses = await db.execute<{ status: string }>(
      sql`select distinct status from messages where id = any(${sql.param(ids)}::bigint[])`,
    );
    expect([...statuses]).toEqual([{ status: 'delivered' }]);
  });

  it('a new attempt re-queues only messages in the allowed statuses, sets the earlier provider id aside and tells the inbox', async () => {
    const t = await conversationWithClient();
    const failed = await createMessage(t.conversation, {
      status: 'failed',
      errorCode: '30003',
      errorMessage: 'Twilio error 30003',
    });
    const delivered = await createMessage(t.conversation, { status: 'delivered' });

    let rows: Awaited<ReturnType<typeof startNewAttempt>> = [];
    rows = await db.transaction((tx) =>
      startNewAttempt(t.business.id, [failed.id, delivered.id], RETRYABLE_STATUSES, undefined, tx),
    );

    expect(rows.map((r) => r.id)).toEqual([failed.id]);
    const [again] = await db.select().from(messages).where(eq(messages.id, failed.id));
    expect(again).toMatchObject({
      status: 'queued',
      errorCode: null,
      errorMessage: null,
      attempts: failed.attempts + 1,
      providerMessageId: null,
    });
    expect(again!.previousProviderMessageIds).toEqual([failed.providerMessageId]);
    const [untouched] = await db.select().from(messages).where(eq(messages.id, delivered.id));
    expect(untouched!.status).toBe('delivered');
    expect([...(await statusEvents(t.business.id))]).toEqual([
      { message_id: failed.id, conversation_id: t.conversation.id, status: 'queued' },
    ]);
  });

  it('a refusal because the recipient opted out opts its address out of that channel only', async () => {
    const t = await conversationWithClient();
    const email = await createMessage(t.conversation, {
      channel: 'email',
      messageType: 'EMAIL',
      toAddress: t.client.email,
      status: 'sending',
      providerMessageId: null,
    });
    await recordSendResults('smtp', {
      sent: [],
      failed: [{ messageId: email.id, code: 'unsubscribed', message: 'The address unsubscribed', optedOut: true }],
      requeue: [],
    });
    expect(await clientOptOuts(t.client.id)).toEqual({ email: true, sms: false });
    const [row] = await db.select().from(messages).where(eq(messages.id, email.id));
    expect(row).toMatchObject({
      status: 'failed',
      errorCode: 'unsubscribed',
      errorMessage: 'The address unsubscribed',
      provider: 'smtp',
    });
  });
});
