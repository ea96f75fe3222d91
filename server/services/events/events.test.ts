import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db, rawSql } from '@/server/db/client';
import {
  assignConversation,
  labelConversation,
  setConversationStatus,
  wakeSnoozedConversations,
} from '@/server/services/conversations';
import { recordConsent } from '@/server/services/compliance/consent';
import { addNote, flagMessage, markMessagesRead } from '@/server/services/conversations/messages';
import { fileMessages } from '@/server/services/messages/insert';
import { recordSendResults } from '@/server/services/messages/lifecycle';
import { cancelScheduledMessage, rescheduleMessage } from '@/server/services/messages/schedule';
import { recordCall } from '@/server/services/voice/call-record';
import { handleSmsStatusCallback } from '@/server/services/webhooks/twilio-status';
import { EVENT_DATA } from './types';
import { submitEmail, submitSms } from '@/server/services/messages/submit';
import { receiveInboundSms } from '@/server/services/webhooks/twilio-inbound';
import { handleInboundEmail } from '@/server/services/webhooks/email-inbound';
import { inboundSmsForm } from '@/server/testing/webhooks';
import { optIn, optOut } from '@/server/services/messages/suppression';
import {
  createClient,
  createConversation,
  createMessage,
  createSmsNumber,
  createStaff,
  createTenant,
} from '@/server/testing/factories';
import { maintainEventPartitions } from './partitions';
import { recordEvents, type NewEvent } from './record';

const DAY_MS = 86_400_000;

async function partitions(): Promise<string[]> {
  const rows = await db.execute<{ name: string }>(sql`
    select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
    where i.inhparent = 'events'::regclass order by 1`);
  return rows.map((r) => r.name);
}

const dayName = (at: Date) => `events_p${at.toISOString().slice(0, 10).replaceAll('-', '')}`;

describe('the event log', () => {
  it('appends events in the order given, in the caller’s transaction, checking each type’s data', async () => {
    const t = await createTenant();
    const assigned = (n: number): NewEvent => ({
      type: 'conversation.assigned',
      businessId: t.business.id,
      conversationId: n,
      actor: { type: 'staff', staff_id: t.owner.id },
      data: { conversation_id: n, staff_id: t.owner.id, previous_staff_id: null, by: 'manual' },
    });
    const ids = await recordEvents([assigned(1), assigned(2), assigned(3)]);
    expect(ids).toHaveLength(3);
    expect([...ids].sort((a, b) => a - b)).toEqual(ids);
    const rows = await db.execute<{
      id: number;
      conversation_id: number;
      actor_type: string;
      actor_staff_id: number;
      data: unknown;
    }>(
      sql`select id, conversation_id, actor_type, actor_staff_id, data from events where business_id = ${t.business.id} order by id`,
    );
    expect(rows.map((r) => [r.id, r.conversation_id, r.actor_type, r.actor_staff_id])).toEqual(
      ids.map((id, i) => [id, i + 1, 'staff', t.owner.id]),
    );
    expect(rows[1]!.data).toEqual({ conversation_id: 2, staff_id: t.owner.id, previous_staff_id: null, by: 'manual' });

    // Rolled back with the change it describes.
    await db
      .transaction(async (tx) => {
        await recordEvents([assigned(4)], tx);
        throw new Error('roll back');
      })
      .catch(() => {});
    // Data of the wrong shape for its type is refused before anything is written.
    const wrong = { ...assigned(5), data: { conversation_id: 5, staff_id: 'nobody' } } as unknown as NewEvent;
    await expect(recordEvents([assigned(6), wrong])).rejects.toThrow();
    const [after] = await db.execute<{ n: number }>(
      sql`select count(*)::int as n from events where business_id = ${t.business.id}`,
    );
    expect(after!.n).toBe(3);
  });

  it('wakes the log’s readers once per appending transaction, when it commits (migration 0028)', async () => {
    const t = await createTenant();
    const heard: string[] = [];
    const listener = await rawSql().listen('events_appended', (payload) => heard.push(payload));
    const event = (n: number): NewEvent => ({
      type: 'conversation.assigned',
      businessId: t.business.id,
      conversationId: n,
      actor: { type: 'api' },
      data: { conversation_id: n, staff_id: null, previous_staff_id: null, by: 'manual' },
    });
    try {
      await db.transaction(async (tx) => {
        await recordEvents([event(1), event(2)], tx);
        await recordEvents([event(3)], tx);
        await new Promise((r) => setTimeout(r, 200));
        expect(heard).toEqual([]); // nothing before the commit
      });
      await db
        .transaction(async (tx) => {
          await recordEvents([event(4)], tx);
          throw new Error('roll back');
        })
        .catch(() => {});
      await expect.poll(() => heard.length).toBe(1);
      await new Promise((r) => setTimeout(r, 200));
      expect(heard).toEqual(['']); // folded into one; none for the rolled-back one
    } finally {
      await listener.unlisten();
    }
  });

  it('creates the days ahead, takes back rows the default partition held for a new day, and drops days past retention', async () => {
    const t = await createTenant();
    const now = new Date();
    // Ten days on, with the worker down meanwhile: that day has no partition yet, so its event
    // lands in the default partition.
    const later = new Date(now.getTime() + 10 * DAY_MS);
    await db.execute(sql`insert into events (business_id, type, actor_type, data, occurred_at)
                         values (${t.business.id}, 'conversation.woke', 'system', '{"conversation_id": 1}', ${later.toISOString()}::timestamptz)`);
    const [inDefault] = await db.execute<{ n: number }>(sql`select count(*)::int as n from only events_default`);
    expect(inDefault!.n).toBe(1);
    const before = await partitions();
    expect(before).toContain(dayName(now));

    const changes = await maintainEventPartitions(30, later);
    expect(changes.created).toContain(dayName(later));
    expect(changes.created).toContain(dayName(new Date(later.getTime() + 7 * DAY_MS)));
    expect(changes.moved).toBe(1);
    expect(changes.dropped).toEqual([]);
    const [moved] = await db.execute<{ n: number }>(sql`select count(*)::int as n from ${sql.raw(dayName(later))}`);
    expect(moved!.n).toBe(1);
    // Nothing to do a second time.
    expect(await maintainEventPartitions(30, later)).toEqual({ created: [], dropped: [], moved: 0 });

    // Five days' retention, seen from ten days on: the days up to five days ago go, whole.
    const pruned = await maintainEventPartitions(5, later);
    const cutoff = new Date(later.getTime() - 5 * DAY_MS);
    expect(pruned.dropped.length).toBeGreaterThan(0);
    for (const name of pruned.dropped) expect(name < dayName(cutoff)).toBe(true);
    const left = await partitions();
    expect(left).not.toContain(dayName(now));
    expect(left).toContain(dayName(later));
    expect(left).toContain('events_default');
    // The log still takes writes, today's going to the default partition now that its day is gone.
    await recordEvents([
      {
        type: 'conversation.woke',
        businessId: t.business.id,
        actor: { type: 'system' },
        data: { conversation_id: 1 },
      },
    ]);
  });
});

describe('the conversation service’s events', () => {
  async function eventsOf(businessId: number) {
    return db.execute<{
      type: string;
      conversation_id: number;
      actor_type: string;
      actor_staff_id: number | null;
      data: unknown;
    }>(
      sql`select type, conversation_id, actor_type, actor_staff_id, data from events where business_id = ${businessId} order by id`,
    );
  }

  it('one event per field that changed, with its previous value and who changed it; a repeat records nothing', async () => {
    const t = await createTenant();
    const colleague = await createStaff(t.business.id);
    const conversation = await createConversation(t.business.id, (await createClient(t.business.id)).id);
    const id = conversation.id;
    await assignConversation(t.business.id, id, colleague.id, t.owner.id);
    await assignConversation(t.business.id, id, colleague.id, t.owner.id); // no change
    await labelConversation(t.business.id, id, 'VIP', null);
    const until = new Date(Date.now() + 3_600_000);
    await setConversationStatus(t.business.id, id, { status: 'snoozed', snoozed_until: until }, colleague.id);
    await assignConversation(t.business.id, id, null, colleague.id);
    expect(await eventsOf(t.business.id)).toEqual([
      {
        type: 'conversation.assigned',
        conversation_id: id,
        actor_type: 'staff',
        actor_staff_id: t.owner.id,
        data: { conversation_id: id, staff_id: colleague.id, previous_staff_id: null, by: 'manual' },
      },
      {
        type: 'conversation.labeled',
        conversation_id: id,
        actor_type: 'api',
        actor_staff_id: null,
        data: { conversation_id: id, label: 'VIP', previous_label: null },
      },
      {
        type: 'conversation.status_changed',
        conversation_id: id,
        actor_type: 'staff',
        actor_staff_id: colleague.id,
        data: { conversation_id: id, status: 'snoozed', previous_status: 'open' },
      },
      {
        type: 'conversation.snoozed',
        conversation_id: id,
        actor_type: 'staff',
        actor_staff_id: colleague.id,
        data: { conversation_id: id, snoozed_until: until.toISOString() },
      },
      {
        type: 'conversation.assigned',
        conversation_id: id,
        actor_type: 'staff',
        actor_staff_id: colleague.id,
        data: { conversation_id: id, staff_id: null, previous_staff_id: colleague.id, by: 'manual' },
      },
    ]);
  });

  it('a change rolled back takes its events with it; a wake-up is the system’s', async () => {
    const t = await createTenant();
    const conversation = await createConversation(t.business.id, (await createClient(t.business.id)).id, {
      status: 'snoozed',
      snoozedUntil: new Date(Date.now() - 1000),
    });
    await db
      .transaction(async (tx) => {
        await labelConversation(t.business.id, conversation.id, 'Later', t.owner.id, tx);
        throw new Error('roll back');
      })
      .catch(() => {});
    expect(await eventsOf(t.business.id)).toEqual([]);
    expect(await wakeSnoozedConversations()).toBeGreaterThanOrEqual(1);
    expect((await eventsOf(t.business.id)).map((e) => [e.type, e.actor_type, e.data])).toEqual([
      ['conversation.status_changed', 'system', { conversation_id: conversation.id, status: 'open', previous_status: 'snoozed' }],
      ['conversation.woke', 'system', { conversation_id: conversation.id }],
    ]);
  });
});

describe('compliance and notes write their events', () => {
  it('an opt-out by the client’s STOP, an opt-in staff recorded, a consent and a note: each once, with its actor', async () => {
    const t = await createTenant();
    const phone = '+12125550123';
    const first = await createClient(t.business.id, { phoneNumber: phone });
    const second = await createClient(t.business.id, { phoneNumber: phone });
    const target = { businessId: t.business.id, channel: 'sms' as const, address: phone };
    await db.transaction(async (tx) => {
      await optOut({ ...target, source: 'keyword' }, tx);
      await optOut({ ...target, source: 'keyword' }, tx); // already opted out: no record, no event
      await optIn({ ...target, source: 'in_person', staffId: t.owner.id, note: 'Asked at the desk' }, tx);
    });
    await recordConsent(
      t.business.id,
      first.id,
      { channel: 'sms', purpose: 'marketing', status: 'given', source: 'web_form' } as never,
      null,
    );
    const conversation = await createConversation(t.business.id, first.id);
    const note = await addNote(t.business.id, conversation.id, 'Called back', t.owner.id);

    const rows = await db.execute<{
      type: string;
      client_id: number | null;
      actor_type: string;
      actor_staff_id: number | null;
      data: Record<string, unknown>;
    }>(
      sql`select type, client_id, actor_type, actor_staff_id, data from events where business_id = ${t.business.id} order by id`,
    );
    expect(rows.map((r) => [r.type, r.actor_type, r.actor_staff_id])).toEqual([
      ['client.opted_out', 'client', null],
      ['client.opted_in', 'staff', t.owner.id],
      ['consent.recorded', 'api', null],
      ['note.created', 'staff', t.owner.id],
    ]);
    expect(rows[0]!.data).toEqual({
      channel: 'sms',
      address: phone,
      source: 'keyword',
      note: null,
      client_ids: [first.id, second.id],
    });
    expect(rows[0]!.client_id).toBeNull(); // two clients share the number
    // The history record's note travels with the event (the timeline's activity line shows it).
    expect(rows[1]!.data).toMatchObject({ source: 'in_person', note: 'Asked at the desk' });
    expect(rows[2]!.client_id).toBe(first.id);
    expect(rows[2]!.data).toMatchObject({
      client_id: first.id,
      channel: 'sms',
      purpose: 'marketing',
      status: 'given',
      source: 'web_form',
    });
    expect(rows[3]!.data).toEqual({
      conversation_id: conversation.id,
      message_id: note.data.message_id,
      staff_id: t.owner.id,
      mentioned_staff_ids: [],
    });
  });
});

describe('the timeline write path writes its events', () => {
  it('a bulk send: a message.created per message and a conversation.created per new conversation; an inbound text: message.received', async () => {
    const t = await createTenant();
    await createSmsNumber(t.business.id);
    const known = await createClient(t.business.id);
    const existing = await createConversation(t.business.id, known.id);
    const fresh = await createClient(t.business.id);
    const sent = await submitSms(
      t.business.id,
      {
        sender_type: 'system',
        category: 'reminder',
        messages: [
          { client_id: known.id, message: 'See you Tuesday' },
          { client_id: fresh.id, message: 'Welcome!' },
        ],
      } as never,
      'send',
    );
    const [reply] = await db.transaction((tx) =>
      fileMessages(
        t.business.id,
        [
          {
            businessId: t.business.id,
            clientId: known.id,
            channel: 'sms',
            direction: 'inbound',
            messageType: 'TEXT',
            senderType: 'client',
            content: 'Thanks',
            status: 'received',
            origin: 'webhook',
            sentAt: new Date(),
          },
        ],
        tx,
      ),
    );
    const rows = await db.execute<{
      type: string;
      conversation_id: number;
      message_id: number | null;
      actor_type: string;
      data: Record<string, unknown>;
    }>(
      sql`select type, conversation_id, message_id, actor_type, data from events where business_id = ${t.business.id} order by id`,
    );
    const freshConversation = rows.find((r) => r.type === 'conversation.created')!.conversation_id;
    expect(rows.map((r) => [r.type, r.conversation_id, r.message_id, r.actor_type])).toEqual([
      ['conversation.created', freshConversation, null, 'system'],
      ['message.created', existing.id, sent.message_ids[0], 'api'],
      ['message.created', freshConversation, sent.message_ids[1], 'api'],
      ['message.received', existing.id, reply!.id, 'client'],
    ]);
    expect(rows[1]!.data).toEqual({
      message_id: sent.message_ids[0],
      conversation_id: existing.id,
      client_id: known.id,
      channel: 'sms',
      message_type: 'TEXT',
      direction: 'outbound',
      status: 'queued',
      send_at: null,
    });
    expect(rows[3]!.data).toMatchObject({ direction: 'inbound', status: 'received', client_id: known.id });
  });

  it('a client writing into a resolved conversation reopens it: conversation.status_changed, by the client', async () => {
    const t = await createTenant();
    const client = await createClient(t.business.id);
    const conversation = await createConversation(t.business.id, client.id, { status: 'resolved' });
    await db.transaction((tx) =>
      fileMessages(
        t.business.id,
        [
          {
            businessId: t.business.id,
            clientId: client.id,
            channel: 'sms',
            direction: 'inbound',
            messageType: 'TEXT',
            senderType: 'client',
            content: 'One more question',
            status: 'received',
            origin: 'webhook',
            sentAt: new Date(),
          },
        ],
        tx,
      ),
    );
    const rows = await db.execute<{ type: string; actor_type: string; data: unknown }>(
      sql`select type, actor_type, data from events where business_id = ${t.business.id} order by id`,
    );
    expect(rows.map((r) => [r.type, r.actor_type])).toEqual([
      ['message.received', 'client'],
      ['conversation.status_changed', 'client'],
    ]);
    expect(rows[1]!.data).toEqual({ conversation_id: conversation.id, status: 'open', previous_status: 'resolved' });
  });
});

describe('the insert path’s events, written in SQL by the inserting statements (messages/insert.ts)', () => {
  /** What each timeline row's event is (docs/api.md#events): written out here as the product defines it, the row's columns in. */
  function expectedEvent(m: MessageRow) {
    const staffOrApi = m.staff_id === null ? ['api', null] : ['staff', m.staff_id];
    const about = { conversation_id: m.conversation_id, message_id: m.id, client_id: m.client_id };
    if (m.message_type === 'NOTE') {
      // Mentions come only with the inbox's and the notes endpoint's notes (mentions.test.ts).
      const data = { conversation_id: m.conversation_id, message_id: m.id, staff_id: m.staff_id, mentioned_staff_ids: [] };
      return { type: 'note.created', ...about, actor: staffOrApi, data };
    }
    const summary = {
      message_id: m.id,
      conversation_id: m.conversation_id,
      client_id: m.client_id,
      channel: m.channel,
      message_type: m.message_type,
      direction: m.direction,
      status: m.status,
    };
    if (m.direction === 'inbound') {
      return { type: 'message.received', ...about, actor: m.origin === 'record' ? staffOrApi : ['client', null], data: summary };
    }
    const actor = m.origin === 'system' ? ['system', null] : staffOrApi;
    return {
      type: 'message.created',
      ...about,
      actor,
      data: { ...summary, send_at: m.send_at === null ? null : new Date(m.send_at).toISOString() },
    };
  }

  type MessageRow = {
    id: number;
    conversation_id: number;
    client_id: number | null;
    channel: string | null;
    message_type: string;
    direction: string;
    status: string;
    origin: string;
    staff_id: number | null;
    send_at: string | null;
  };

  it('every kind of row gets its one event, parsing with its EVENT_DATA schema and matching the row; a new conversation its conversation.created', async () => {
    const t = await createTenant();
    const number = await createSmsNumber(t.business.id);
    const known = await createClient(t.business.id, { email: `known.${Date.now()}@example.test` });
    const existing = await createConversation(t.business.id, known.id);
    const fresh = [await createClient(t.business.id), await createClient(t.business.id)];
    const sendAt = new Date(Date.now() + 90 * 60_000);
    const bid = t.business.id;

    // A staff member's bulk SMS (two of them into new conversations), an API email, a scheduled SMS, a recorded one.
    await submitSms(
      bid,
      {
        sender_type: 'staff',
        staff_id: t.owner.id,
        messages: [known, ...fresh].map((c) => ({ client_id: c.id, message: 'See you Tuesday' })),
      } as never,
      'send',
    );
    await submitEmail(
      bid,
      { sender_type: 'system', messages: [{ client_id: known.id, subject: 'Receipt', message: 'Thanks' }] } as never,
      'send',
    );
    await submitSms(
      bid,
      { sender_type: 'system', send_at: sendAt, messages: [{ client_id: fresh[0]!.id, message: 'Later' }] } as never,
      'send',
    );
    await submitSms(
      bid,
      { sender_type: 'system', messages: [{ client_id: fresh[1]!.id, message: 'Sent elsewhere', status: 'sent' }] } as never,
      'record',
    );
    // Notes, by a staff member and by the API.
    await addNote(bid, existing.id, 'Called back', t.owner.id);
    await addNote(bid, existing.id, 'From the booking system', null);
    // Inbound: a text from a new number (a new client and conversation), HELP (answered automatically,
    // the system's outbound text), an email, and an inbound text another system recorded for a staff member.
    await receiveInboundSms(inboundSmsForm(number.phoneNumber, '+16465550177', 'Hello?') as never, {}, null);
    await receiveInboundSms(inboundSmsForm(number.phoneNumber, known.phoneNumber!, 'HELP') as never, {}, null);
    const mail = {
      from: known.email!,
      to: t.business.fromEmail!,
      subject: 'Re: Receipt',
      text: 'Got it',
      html: null,
      headers: `Message-ID: <${Date.now()}.events@example.test>`,
      envelope: null,
      attachments: [],
    };
    await handleInboundEmail(mail, {}, Buffer.from('Got it'));
    await db.transaction((tx) =>
      fileMessages(
        bid,
        [
          {
            businessId: bid,
            clientId: known.id,
            channel: 'sms',
            direction: 'inbound',
            messageType: 'TEXT',
            senderType: 'client',
            staffId: t.owner.id,
            content: 'Recorded reply',
            status: 'received',
            origin: 'record',
            sentAt: new Date(),
          },
        ],
        tx,
      ),
    );

    const rows = await db.execute<MessageRow>(sql`
      select id, conversation_id, client_id, channel, message_type, direction, status, origin, staff_id, send_at
      from messages where business_id = ${bid} order by id`);
    const events = await db.execute<{
      type: keyof typeof EVENT_DATA;
      conversation_id: number | null;
      message_id: number | null;
      client_id: number | null;
      actor_type: string;
      actor_staff_id: number | null;
      data: Record<string, unknown>;
    }>(sql`
      select type, conversation_id, message_id, client_id, actor_type, actor_staff_id, data from events
      where business_id = ${bid} and type in ('message.created', 'message.received', 'note.created', 'conversation.created')
      order by id`);
    // Each event's data is exactly its type's shape: no key missing, none extra, nulls where nullable.
    for (const e of events) expect(EVENT_DATA[e.type].parse(e.data), e.type).toEqual(e.data);

    // One event per row, in the rows' order, describing it.
    const timeline = events.filter((e) => e.type !== 'conversation.created');
    expect(
      timeline.map((e) => ({
        type: e.type,
        conversation_id: e.conversation_id,
        message_id: e.message_id,
        client_id: e.client_id,
        actor: [e.actor_type, e.actor_staff_id],
        data: e.data,
      })),
    ).toEqual(rows.map(expectedEvent));
    // Every kind the brief of this test names is among them (so the comparison above covers it).
    const kinds = new Set(
      timeline.map((e) => `${e.type} ${String(e.data.channel)} ${e.actor_type} ${e.data.send_at ? 'at' : ''}`),
    );
    for (const kind of [
      'message.created sms staff ',
      'message.created email api ',
      'message.created sms api at',
      'message.created sms system ',
      'message.received sms client ',
      'message.received email client ',
      'message.received sms staff ',
      'note.created undefined staff ',
      'note.created undefined api ',
    ])
      expect(kinds, kind).toContain(kind);
    expect(rows.some((r) => r.origin === 'record' && r.direction === 'outbound')).toBe(true);

    // A conversation.created for each conversation the path opened (all but the one made beforehand), by the system.
    const opened = await db.execute<{ id: number; client_id: number }>(
      sql`select id, client_id from conversations where business_id = ${bid} and id <> ${existing.id} order by id`,
    );
    expect(opened).toHaveLength(3);
    expect(events.filter((e) => e.type === 'conversation.created')).toEqual(
      opened.map((c) => ({
        type: 'conversation.created',
        conversation_id: c.id,
        message_id: null,
        client_id: c.client_id,
        actor_type: 'system',
        actor_staff_id: null,
        data: { conversation_id: c.id, client_id: c.client_id },
      })),
    );
  });
});

describe('message status changes write message.status_updated (migration 0025)', () => {
  it('each change the log carries, once, with its previous status and actor; none into sending or back to queued', async () => {
    const t = await createTenant();
    const number = await createSmsNumber(t.business.id);
    const client = await createClient(t.business.id);
    const conversation = await createConversation(t.business.id, client.id);
    const base = { direction: 'outbound' as const, fromAddress: number.phoneNumber };
    const sent = await createMessage(conversation, { ...base, status: 'queued' });
    const scheduled = await createMessage(conversation, {
      ...base,
      status: 'scheduled',
      sendAt: new Date(Date.now() + 3_600_000),
    });
    // The worker claims it (into sending: not an event), a transient error puts it back (not one either).
    await db.execute(sql`update messages set status = 'sending' where id = ${sent.id}`);
    await db.execute(sql`update messages set status = 'queued' where id = ${sent.id}`);
    await db.execute(sql`update messages set status = 'sending' where id = ${sent.id}`);
    await recordSendResults('twilio', {
      sent: [{ messageId: sent.id, providerMessageId: 'SMevents1', status: 'sent', segments: 1 }],
      failed: [],
      requeue: [],
    });
    const callback = await handleSmsStatusCallback(
      { MessageSid: 'SMevents1', MessageStatus: 'delivered', From: number.phoneNumber },
      {},
    );
    expect(callback).toBe('applied');
    await cancelScheduledMessage(t.business.id, scheduled.id, { type: 'staff', staff_id: t.owner.id });

    const rows = await db.execute<{
      message_id: number;
      actor_type: string;
      actor_staff_id: number | null;
      data: Record<string, unknown>;
    }>(
      sql`select message_id, actor_type, actor_staff_id, data from events
          where business_id = ${t.business.id} and type = 'message.status_updated' order by id`,
    );
    expect(rows.map((r) => [r.message_id, r.data.previous_status, r.data.status, r.actor_type, r.actor_staff_id])).toEqual([
      [sent.id, 'sending', 'sent', 'system', null],
      [sent.id, 'sent', 'delivered', 'provider', null],
      [scheduled.id, 'scheduled', 'canceled', 'staff', t.owner.id],
    ]);
    // Built by the database, the data still has its type's shape.
    for (const r of rows) EVENT_DATA['message.status_updated'].parse(r.data);
    expect(rows[2]!.data).toMatchObject({ error_code: 'canceled', conversation_id: conversation.id, client_id: client.id });
  });
});

describe('calls write call.started, call.completed and voicemail.received (migrations 0027, 0030)', () => {
  it('once each, whatever order and repeats the callbacks come in', async () => {
    const t = await createTenant();
    const client = await createClient(t.business.id);
    const conversation = await createConversation(t.business.id, client.id);
    const call = {
      businessId: t.business.id,
      clientId: client.id,
      conversationId: conversation.id,
      callSid: `CA${t.business.id}events`,
      direction: 'inbound' as const,
      staffId: null,
      from: '+12125550199',
      to: '+14155550100',
    };
    await db.transaction(async (tx) => {
      await recordCall({ ...call, status: 'ringing' }, tx);
      await recordCall({ ...call, status: 'no_answer', durationSeconds: 0 }, tx);
      await recordCall({ ...call, status: 'no_answer' }, tx); // a repeated callback
      await recordCall(
        { ...call, status: 'initiated', recordingUrl: 'https://api.twilio.com/rec/RE1', outcome: 'voicemail' },
        tx,
      );
      await recordCall(
        { ...call, status: 'initiated', recordingUrl: 'https://api.twilio.com/rec/RE1', outcome: 'voicemail' },
        tx,
      );
    });
    const rows = await db.execute<{ type: string; actor_type: string; data: Record<string, unknown> }>(
      sql`select type, actor_type, data from events where business_id = ${t.business.id} and type like '%.%' and type not like 'conversation.%' order by id`,
    );
    expect(rows.map((r) => [r.type, r.actor_type])).toEqual([
      ['call.started', 'provider'],
      ['call.completed', 'provider'],
      ['voicemail.received', 'client'],
    ]);
    expect(EVENT_DATA['call.started'].parse(rows[0]!.data)).toMatchObject({ status: 'ringing', duration_seconds: null });
    expect(EVENT_DATA['call.completed'].parse(rows[1]!.data)).toMatchObject({
      conversation_id: conversation.id,
      client_id: client.id,
      channel: 'voice',
      message_type: 'CALL',
      status: 'no_answer',
      duration_seconds: 0,
    });
    EVENT_DATA['voicemail.received'].parse(rows[2]!.data);
  });
});

describe('read marks, flags and reschedules are events (migration 0030)', () => {
  it('each change logs one event with its actor, and a request that changes nothing logs none', async () => {
    const t = await createTenant();
    const client = await createClient(t.business.id);
    const conversation = await createConversation(t.business.id, client.id);
    const inbound = await createMessage(conversation, { direction: 'inbound', status: 'received', isRead: false });
    const scheduled = await createMessage(conversation, { status: 'scheduled', sendAt: new Date(Date.now() + DAY_MS) });
    const staff = { type: 'staff', staff_id: t.owner.id } as const;
    const later = new Date(Date.now() + 2 * DAY_MS);
    await markMessagesRead(t.business.id, { conversation_id: conversation.id, is_read: true }, staff);
    await markMessagesRead(t.business.id, { conversation_id: conversation.id, is_read: true }, staff); // nothing left unread
    await flagMessage(t.business.id, inbound.id, true, { type: 'api' });
    await flagMessage(t.business.id, inbound.id, true, { type: 'api' }); // already flagged
    await rescheduleMessage(t.business.id, scheduled.id, later, staff);
    const rows = await db.execute<{ type: string; actor_type: string; message_id: number | null; data: Record<string, unknown> }>(
      sql`select type, actor_type, message_id, data from events where business_id = ${t.business.id} order by id`,
    );
    expect(rows.map((r) => [r.type, r.actor_type, r.message_id])).toEqual([
      ['conversation.read', 'staff', null],
      ['message.flagged', 'api', inbound.id],
      ['message.rescheduled', 'staff', scheduled.id],
    ]);
    expect(EVENT_DATA['conversation.read'].parse(rows[0]!.data)).toEqual({
      conversation_id: conversation.id,
      is_read: true,
      message_count: 1,
      unread_count: 0,
    });
    expect(EVENT_DATA['message.flagged'].parse(rows[1]!.data)).toMatchObject({ message_id: inbound.id, flagged: true });
    expect(EVENT_DATA['message.rescheduled'].parse(rows[2]!.data)).toMatchObject({
      message_id: scheduled.id,
      status: 'scheduled',
      previous_send_at: expect.any(String),
    });
    expect(new Date(rows[2]!.data.send_at as string).getTime()).toBeGreaterThanOrEqual(later.getTime());
  });

  it('a flagged note (no channel) is an event like any message (once a 500: the fuzzer)', async () => {
    const t = await createTenant();
    const client = await createClient(t.business.id);
    const conversation = await createConversation(t.business.id, client.id);
    const note = await createMessage(conversation, { messageType: 'NOTE', channel: null });
    await flagMessage(t.business.id, note.id, true, { type: 'api' });
    const [row] = await db.execute<{ data: Record<string, unknown> }>(
      sql`select data from events where business_id = ${t.business.id} and type = 'message.flagged'`,
    );
    expect(EVENT_DATA['message.flagged'].parse(row!.data)).toMatchObject({
      message_id: note.id,
      channel: null,
      message_type: 'NOTE',
    });
  });
});
