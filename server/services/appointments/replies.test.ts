import { sql } from 'drizzle-orm';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { webhookReceiverPerFile } from '@/server/testing/webhook-receiver';
import { db } from '@/server/db/client';
import { needsAttentionCount } from '@/server/services/conversations/needs-attention';
import { EVENT_HANDLERS } from '@/server/services/events/handlers';
import { createClient, createConversation, createMessage, createSmsNumber } from '@/server/testing/factories';
import { deleteJson, getJson, postJson, putJson, restTenant } from '@/server/testing/http';
import { staffCaller } from '@/server/testing/trpc';
import { TWILIO_PATHS, inboundSmsForm, postTwilio } from '@/server/testing/webhooks';
import type { LoggedEvent } from '@/server/services/events/dispatch';
import { confirmAppointment } from './outcomes';
import { APPOINTMENT_REPLIES_HANDLER, readReplyToReminder, repliesToRead } from './replies-handler';

/**
 * Replies to reminders (docs/api.md#replies-to-reminders), end to end: a platform's appointment, its
 * asking reminder sent, the client's reply through Twilio's signed webhook, read by the event log's
 * handler (run by the worker, as in production), and the outcome signed to the platform's endpoint.
 */
const { received, url: receiverUrl } = webhookReceiverPerFile();

const TYPES = ['appointment.confirmed', 'appointment.reschedule_requested', 'appointment.cancel_requested'];

/** A business with a number, a client, an endpoint, and an appointment in three days whose asking reminder went a minute ago. */
async function setup() {
  const t = await restTenant();
  const b = t.business.id;
  await db.execute(sql`update businesses set sending_window_start = 0, sending_window_end = 1440 where id = ${b}`);
  const number = await createSmsNumber(b);
  const client = await createClient(b, { name: 'Ana Lima' });
  const url = receiverUrl(`/hooks/${b}`);
  const endpoint = await postJson(`${t.base}/webhook-endpoints`, t.key, { url, event_types: TYPES });
  expect(endpoint.status).toBe(201);
  const startsAt = Date.now() + 3 * 86_400_000;
  const put = await putJson(`${t.base}/appointments/a1`, t.key, {
    client_id: client.id,
    starts_at: new Date(startsAt).toISOString(),
    ends_at: new Date(startsAt + 3_600_000).toISOString(),
  });
  expect(put.status).toBeLessThan(300);
  const appointmentId = put.body.appointment_id as number;
  const [asking] = await db.execute<{ message_id: number }>(sql`
    select r.message_id from appointment_reminders r where r.business_id = ${b} and r.appointment_id = ${appointmentId}
      and r.asks_confirmation and r.active`);
  expect(asking).toBeTruthy();
  const send = () =>
    db.execute(
      sql`update messages set status = 'delivered', sent_at = now() - interval '1 minute' where id = ${asking!.message_id}`,
    );
  const reply = async (text: string) => {
    const res = await postTwilio(TWILIO_PATHS.smsIncoming, inboundSmsForm(number.phoneNumber, client.phoneNumber!, text));
    expect(res.status).toBe(200);
    const [m] = await db.execute<{ id: number; conversation_id: number; sent_at: Date }>(sql`
      select id, conversation_id, sent_at from messages where business_id = ${b} and direction = 'inbound' order by id desc limit 1`);
    return { messageId: Number(m!.id), conversationId: Number(m!.conversation_id), sentAt: new Date(m!.sent_at) };
  };
  const status = async () =>
    (await db.execute<{ status: string }>(sql`select status from appointments where id = ${appointmentId}`))[0]!.status;
  const conversation = async (id: number) => {
    const [c] = await db.execute<{
      reason: string | null;
      appointment_id: number | null;
      since: string | null;
      possible_opt_out: number | null;
    }>(sql`
      select needs_attention_reason as reason, needs_attention_appointment_id as appointment_id, needs_attention_since as since,
             possible_opt_out_message_id as possible_opt_out
      from conversations where id = ${id}`);
    return { ...c!, since: c!.since && new Date(c!.since), possible_opt_out: c!.possible_opt_out && Number(c!.possible_opt_out) };
  };
  const metadata = async (messageId: number) =>
    (
      await db.execute<{ r: Record<string, unknown> | null }>(
        sql`select provider_metadata->'appointment_reply' as r from messages where id = ${messageId}`,
      )
    )[0]!.r;
  const events = async (type: string) =>
    (
      await db.execute<{ n: number }>(
        sql`select count(*)::int as n from events where business_id = ${b} and type = ${type} and data->>'appointment_id' = ${String(appointmentId)}`,
      )
    )[0]!.n;
  /** The signed deliveries this business's endpoint received. */
  const delivered = () => {
    const wh = new Webhook(endpoint.body.secret);
    return received
      .filter((r) => r.url === `/hooks/${b}`)
      .map(
        (r) =>
          wh.verify(r.body, {
            'webhook-id': r.headers['webhook-id'] as string,
            'webhook-timestamp': r.headers['webhook-timestamp'] as string,
            'webhook-signature': r.headers['webhook-signature'] as string,
          }) as { type: string; data: Record<string, unknown> },
      );
  };
  /** The platform's PUT of the appointment as it is, but confirmed: its status. */
  const platformConfirms = async () => {
    const current = (await getJson(`${t.base}/appointments/a1`, t.key)).body;
    const { client_id, starts_at, ends_at } = current;
    return (await putJson(`${t.base}/appointments/a1`, t.key, { client_id, starts_at, ends_at, status: 'confirmed' })).status;
  };
  /** Until the handler has read the reply (its reading is written on it, whatever it decided). */
  const read = (messageId: number) => expect.poll(() => metadata(messageId), { timeout: 20_000 }).not.toBeNull();
  /** Texts we sent the client after `after` that are no reminder: an automatic answer, had there been one. */
  const answers = async (after: number) =>
    (
      await db.execute<{ n: number }>(sql`
        select count(*)::int as n from messages
        where business_id = ${b} and direction = 'outbound' and id > ${after} and coalesce(category, '') <> 'reminder'`)
    )[0]!.n;
  return {
    t,
    b,
    client,
    appointmentId,
    send,
    reply,
    status,
    conversation,
    metadata,
    events,
    delivered,
    read,
    answers,
    platformConfirms,
  };
}

describe('replies to appointment reminders', () => {
  it('is a handler of the event log', () => {
    expect(EVENT_HANDLERS.map((h) => h.name)).toContain(APPOINTMENT_REPLIES_HANDLER);
  });

  it('reads only replies of clients with an appointment ahead whose asking reminder stands', async () => {
    const s = await setup(); // booked in three days, its asking reminder scheduled
    const other = await setup(); // another business, the same
    const appointmentFor = async (externalId: string) => {
      const client = await createClient(s.b);
      const put = await putJson(`${s.t.base}/appointments/${externalId}`, s.t.key, {
        client_id: client.id,
        starts_at: new Date(Date.now() + 3 * 86_400_000).toISOString(),
        ends_at: new Date(Date.now() + 3 * 86_400_000 + 3_600_000).toISOString(),
      });
      return { client, appointmentId: put.body.appointment_id as number };
    };
    const asking = (appointmentId: number) =>
      sql`(select message_id from appointment_reminders where appointment_id = ${appointmentId} and asks_confirmation)`;
    const confirmedAfterItWent = await appointmentFor('went');
    await db.execute(
      sql`update messages set status = 'delivered', sent_at = now() where id in ${asking(confirmedAfterItWent.appointmentId)}`,
    );
    await confirmAppointment(s.b, confirmedAfterItWent.appointmentId, { actor: { type: 'api' } });
    const confirmedBeforeItWent = await appointmentFor('confirmed');
    await confirmAppointment(s.b, confirmedBeforeItWent.appointmentId, { actor: { type: 'api' } });
    const canceled = await appointmentFor('canceled');
    await deleteJson(`${s.t.base}/appointments/canceled`, s.t.key);
    const begun = await appointmentFor('begun');
    await db.execute(sql`
      with a as (update appointments set starts_at = now() - interval '1 minute' where id = ${begun.appointmentId} returning starts_at)
      update appointment_reminders set for_starts_at = (select starts_at from a) where appointment_id = ${begun.appointmentId}`);
    const moved = await appointmentFor('moved');
    // Its asking reminder stands, but for another start than the appointment's now.
    await db.execute(
      sql`update appointment_reminders set for_starts_at = for_starts_at - interval '1 day' where appointment_id = ${moved.appointmentId}`,
    );
    const noAppointment = { client: await createClient(s.b) };

    const replyOf = async (businessId: number, clientId: number) => {
      // A reminder opened the conversation, if one was written.
      const [open] = await db.execute<{ id: number }>(
        sql`select id from conversations where business_id = ${businessId} and client_id = ${clientId}`,
      );
      const conversation = open ?? (await createConversation(businessId, clientId));
      const m = await createMessage(
        { id: conversation.id, businessId, clientId },
        { direction: 'inbound', senderType: 'client', fromAddress: '+12125550123', status: 'received' },
      );
      return {
        id: m.id,
        businessId,
        type: 'message.received',
        conversationId: conversation.id,
        messageId: m.id,
        clientId,
        actor: { type: 'client' },
        data: { direction: 'inbound', channel: 'sms' },
        occurredAt: new Date(),
      } satisfies LoggedEvent;
    };
    const ahead = await replyOf(s.b, s.client.id);
    const elsewhere = await replyOf(other.b, other.client.id);
    const readNothing = await Promise.all(
      [confirmedBeforeItWent, canceled, begun, moved, noAppointment].map((x) => replyOf(s.b, x.client.id)),
    );
    const stillRead = await replyOf(s.b, confirmedAfterItWent.client.id);
    const email = { ...ahead, data: { direction: 'inbound', channel: 'email' } };
    const read = await repliesToRead([ahead, elsewhere, ...readNothing, stillRead, email], db);
    expect(read.map((e) => e.messageId)).toEqual([ahead.messageId, elsewhere.messageId, stillRead.messageId]);
  });

  it('"c" confirms the appointment, the platform receives a signed appointment.confirmed, a replay changes nothing', async () => {
    const s = await setup();
    await s.send();
    const { messageId, conversationId } = await s.reply('c');
    await expect.poll(s.status, { timeout: 20_000 }).toBe('confirmed');
    await expect.poll(() => s.delivered().length, { timeout: 20_000 }).toBe(1);
    const [event] = s.delivered();
    expect(event).toMatchObject({
      type: 'appointment.confirmed',
      data: { appointment_id: s.appointmentId, status: 'confirmed', message_id: messageId, actor: { type: 'client' } },
    });
    expect(await s.metadata(messageId)).toMatchObject({ appointment_id: s.appointmentId, intent: 'confirm', matched: 'c' });
    expect((await s.conversation(conversationId)).reason).toBeNull();
    // The timeline says how the reply was read.
    const timeline = await getJson(`${s.t.base}/conversations/${conversationId}/messages`, s.t.key);
    const shown = (timeline.body.messages as { message_id: number; appointment_reply: unknown }[]).find(
      (x) => x.message_id === messageId,
    );
    expect(shown?.appointment_reply).toEqual({ appointment_id: s.appointmentId, intent: 'confirm' });
    // Null on every other message (the reminders).
    const others = (timeline.body.messages as { message_id: number; appointment_reply: unknown }[]).filter(
      (x) => x.message_id !== messageId,
    );
    expect(others.length).toBeGreaterThan(0);
    expect(others.every((x) => x.appointment_reply === null)).toBe(true);
    // Replayed: read already, nothing logged twice.
    expect(await readReplyToReminder(s.b, messageId)).toEqual({ skipped: 'already read' });
    expect(await s.events('appointment.confirmed')).toBe(1);
  });

  it('"can we do thursday instead" flags the conversation and the platform receives appointment.reschedule_requested', async () => {
    const s = await setup();
    await s.send();
    const { messageId, conversationId } = await s.reply('can we do thursday instead');
    await expect.poll(async () => (await s.conversation(conversationId)).reason, { timeout: 20_000 }).toBe('reschedule');
    expect((await s.conversation(conversationId)).appointment_id).toBe(s.appointmentId);
    expect(await s.status()).toBe('booked');
    await expect.poll(() => s.delivered().map((e) => e.type), { timeout: 20_000 }).toEqual(['appointment.reschedule_requested']);
    expect(s.delivered()[0]!.data).toMatchObject({ message_id: messageId, status: 'booked' });
    // The Needs attention view lists it, over REST and in the count.
    const listed = await getJson(`${s.t.base}/conversations?needs_attention=true`, s.t.key);
    expect(listed.body.conversations.map((c: { conversation_id: number }) => c.conversation_id)).toEqual([conversationId]);
    expect(listed.body.conversations[0]).toMatchObject({
      needs_attention_reason: 'reschedule',
      needs_attention_appointment_id: s.appointmentId,
    });
    expect(await needsAttentionCount(s.b)).toBe(1);
    // The inbox's view and count.
    const inbox = await staffCaller(s.t.sessionToken);
    const view = await inbox.inbox.list({ needs_attention: 'true' });
    expect(view.conversations.map((c) => c.conversation_id)).toEqual([conversationId]);
    expect((await inbox.inbox.list({ needs_attention: 'false' })).conversations).toEqual([]);
    expect((await inbox.inbox.filters()).needs_attention).toBe(1);
    const others = await getJson(`${s.t.base}/conversations?needs_attention=false`, s.t.key);
    expect(others.body.conversations).toEqual([]);
    // Replayed: nothing logged twice.
    expect(await readReplyToReminder(s.b, messageId)).toEqual({ skipped: 'already read' });
    expect(await s.events('appointment.reschedule_requested')).toBe(1);
    // Resolving the conversation is staff acting on it: cleared.
    const resolved = await postJson(`${s.t.base}/conversations/${conversationId}/status`, s.t.key, { status: 'resolved' });
    expect(resolved.status).toBeLessThan(300);
    expect((await s.conversation(conversationId)).reason).toBeNull();
  });

  it('a decision by the platform clears the flag: a PUT that confirms it, then DELETE', async () => {
    const s = await setup();
    await s.send();
    const first = await s.reply('I need to cancel my appointment');
    await expect.poll(async () => (await s.conversation(first.conversationId)).reason, { timeout: 20_000 }).toBe('cancel');
    expect(await s.platformConfirms()).toBe(200);
    expect((await s.conversation(first.conversationId)).reason).toBeNull();
    const second = await s.reply('can we move it to friday');
    await expect.poll(async () => (await s.conversation(second.conversationId)).reason, { timeout: 20_000 }).toBe('reschedule');
    expect((await deleteJson(`${s.t.base}/appointments/a1`, s.t.key)).status).toBe(200);
    expect((await s.conversation(second.conversationId)).reason).toBeNull();
  });

  it('a later reply’s reason replaces an earlier one, with its time; a staff reply alone leaves it; staff confirming clears it', async () => {
    const s = await setup();
    await s.send();
    const first = await s.reply('can we move it to friday');
    await expect.poll(async () => (await s.conversation(first.conversationId)).reason, { timeout: 20_000 }).toBe('reschedule');
    expect((await s.conversation(first.conversationId)).since).toEqual(first.sentAt);
    const second = await s.reply('I need to cancel my appointment');
    await expect.poll(async () => (await s.conversation(second.conversationId)).reason, { timeout: 20_000 }).toBe('cancel');
    expect(await s.conversation(second.conversationId)).toMatchObject({ appointment_id: s.appointmentId, since: second.sentAt });
    // Answering is not deciding.
    const answer = await postJson(`${s.t.base}/sms`, s.t.session, {
      sender_type: 'staff',
      messages: [{ client_id: s.client.id, message: 'Which day suits you?' }],
    });
    expect(answer.status).toBe(200);
    expect((await s.conversation(second.conversationId)).reason).toBe('cancel');
    // Staff confirming it in the inbox decides it.
    const staff = { type: 'staff' as const, staff_id: s.t.owner.id };
    expect((await confirmAppointment(s.b, s.appointmentId, { actor: staff })).changed).toBe(true);
    expect(await s.conversation(second.conversationId)).toMatchObject({ reason: null, appointment_id: null, since: null });
  });

  it('"unclear" is flagged while the appointment is booked, with no automatic answer; once confirmed it is an ordinary message', async () => {
    const s = await setup();
    await s.send();
    const asked = await s.reply('is it at 3?');
    await expect.poll(async () => (await s.conversation(asked.conversationId)).reason, { timeout: 20_000 }).toBe('unclear');
    expect(await s.metadata(asked.messageId)).toMatchObject({ intent: 'unclear' });
    expect(await s.answers(asked.messageId)).toBe(0);
    // The platform confirms it (which clears the flag); the same question again is read, and flags nothing.
    expect(await s.platformConfirms()).toBe(200);
    const again = await s.reply('is it at 3?');
    await s.read(again.messageId);
    expect(await s.metadata(again.messageId)).toMatchObject({ intent: 'unclear' });
    expect((await s.conversation(again.conversationId)).reason).toBeNull();
    expect(await s.answers(asked.messageId)).toBe(0);
  });

  it('"cancel please" is both a possible opt-out and a cancel request', async () => {
    const s = await setup();
    await s.send();
    const { messageId, conversationId } = await s.reply('cancel please');
    await expect.poll(async () => (await s.conversation(conversationId)).reason, { timeout: 20_000 }).toBe('cancel');
    expect(await s.conversation(conversationId)).toMatchObject({ possible_opt_out: messageId, appointment_id: s.appointmentId });
    expect(await s.metadata(messageId)).toMatchObject({ intent: 'cancel', possible_opt_out: 'cancel' });
    expect(await s.events('appointment.cancel_requested')).toBe(1);
    expect(await s.status()).toBe('booked');
    // For staff to decide: not opted out yet.
    const client = await getJson(`${s.t.base}/clients/${s.client.id}`, s.t.key);
    expect(client.body.opted_out_sms).toBe(false);
  });

  it('"STOP" opts the client out, leaves the appointment unconfirmed and flags it', async () => {
    const s = await setup();
    await s.send();
    const { messageId, conversationId } = await s.reply('STOP');
    await expect.poll(async () => (await s.conversation(conversationId)).reason, { timeout: 20_000 }).toBe('opt_out');
    expect(await s.status()).toBe('booked');
    expect(await s.metadata(messageId)).toMatchObject({ intent: 'opt_out', matched: 'stop' });
    const [opted] = await db.execute<{ n: number }>(
      sql`select count(*)::int as n from events where business_id = ${s.b} and type = 'client.opted_out'`,
    );
    expect(opted!.n).toBe(1);
  });

  it('"I need to cancel my appointment" is a cancel request; with cancel_on_request it cancels', async () => {
    const s = await setup();
    await s.send();
    const first = await s.reply('I need to cancel my appointment');
    await expect.poll(async () => (await s.conversation(first.conversationId)).reason, { timeout: 20_000 }).toBe('cancel');
    expect(await s.status()).toBe('booked');

    const c = await setup();
    // The setting, over REST with the business's reminder rules (the rules left as they are).
    const rules = await getJson(`${c.t.base}/reminder-rules`, c.t.key);
    expect(rules.body.cancel_on_request).toBe(false);
    const set = await putJson(`${c.t.base}/reminder-rules`, c.t.key, {
      rules: rules.body.rules.map((r: { before: string; text: string; asks_confirmation: boolean }) => ({
        before: r.before,
        text: r.text,
        asks_confirmation: r.asks_confirmation,
      })),
      cancel_on_request: true,
    });
    expect(set.status).toBe(200);
    expect(set.body.cancel_on_request).toBe(true);
    // Left out of a later PUT of the rules, it stays.
    const kept = await putJson(`${c.t.base}/reminder-rules`, c.t.key, {
      rules: rules.body.rules.map((r: { before: string; text: string }) => ({ before: r.before, text: r.text })),
    });
    expect(kept.status).toBe(200);
    expect(kept.body.cancel_on_request).toBe(true);
    await c.send();
    const { messageId, conversationId } = await c.reply("can't make it, sorry");
    await expect.poll(c.status, { timeout: 20_000 }).toBe('canceled');
    expect(await c.metadata(messageId)).toMatchObject({ intent: 'cancel', canceled: true });
    expect((await c.conversation(conversationId)).reason).toBeNull();
    expect(await c.events('appointment.cancel_requested')).toBe(1);
    expect(await c.events('appointment.canceled')).toBe(1);
  });

  it('a reply with no open reminder does nothing', async () => {
    const s = await setup(); // the reminder is still scheduled: it has not asked yet
    const { messageId, conversationId } = await s.reply('c');
    expect(await readReplyToReminder(s.b, messageId)).toEqual({ skipped: 'no open reminder' });
    expect(await s.status()).toBe('booked');
    expect(await s.metadata(messageId)).toBeNull();
    expect((await s.conversation(conversationId)).reason).toBeNull();
  });

  it('a reply while the reminder is only queued or sending (not yet gone out) does nothing', async () => {
    const s = await setup();
    for (const status of ['queued', 'sending'] as const) {
      await db.execute(sql`
        update messages set status = ${status}, sent_at = now() - interval '1 minute'
        where id in (select message_id from appointment_reminders where appointment_id = ${s.appointmentId} and asks_confirmation)`);
      const { messageId } = await s.reply('c');
      expect(await readReplyToReminder(s.b, messageId)).toEqual({ skipped: 'no open reminder' });
    }
    expect(await s.status()).toBe('booked');
  });

  it('a reply after the appointment started does nothing', async () => {
    const s = await setup();
    // The reminder asked an hour ago, and the appointment began a minute ago.
    await db.execute(sql`
      with a as (update appointments set starts_at = now() - interval '1 minute', ends_at = now() + interval '1 hour'
                 where id = ${s.appointmentId} returning starts_at)
      update appointment_reminders r set for_starts_at = (select starts_at from a) where r.appointment_id = ${s.appointmentId}`);
    await db.execute(sql`
      update messages set status = 'delivered', sent_at = now() - interval '1 hour'
      where id in (select message_id from appointment_reminders where appointment_id = ${s.appointmentId} and asks_confirmation)`);
    const { messageId } = await s.reply('c');
    expect(await readReplyToReminder(s.b, messageId)).toEqual({ skipped: 'no open reminder' });
    expect(await s.status()).toBe('booked');
  });
});
