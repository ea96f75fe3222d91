import { randomUUID } from 'node:crypto';
import { and, eq, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db } from '@/server/db/client';
import { businesses, messages } from '@/db/schema';
import { dispatchEvents } from '@/server/services/events/dispatch';
import { EVENT_HANDLERS } from '@/server/services/events/handlers';
import { submitSms } from '@/server/services/messages/submit';
import { storeOpeningHours } from '@/server/services/opening-hours';
import { createClient, createLocation, createMessage, createSmsNumber, createTenant } from '@/server/testing/factories';
import { inboundEmailPath, multipartBody } from '@/server/providers/webhook-requests';
import { inboundSmsForm, postBytes, postTwilio, TWILIO_PATHS } from '@/server/testing/webhooks';
import { formatOpening } from '@/server/shared/after-hours';
import { ALWAYS_OPEN, openingClock, WEEKDAYS, type Schedule, type WeeklyHours } from '@/server/shared/opening-hours';
import { wallClock } from '@/server/shared/zoned-time';
import { AFTER_HOURS_HANDLER, afterHoursHandler, answerAfterHours } from './handler';

/**
 * The after-hours answer (docs/api.md#after-hours-answer), through the real webhooks and the real
 * dispatcher: one answer per conversation per closed period, and every guard that keeps it quiet.
 * Test businesses are in America/New_York.
 */

const ZONE = 'America/New_York';
const REPLY = '{business_name}: we are closed. We open {next_opening} and will answer then.';
const HOUR = 3_600_000;

/** Open one hour a day, starting two hours from now on the business's clock: closed now, an opening ahead. */
function closedNow(): Schedule {
  const w = wallClock(ZONE, new Date());
  const start = (w.hour * 60 + w.minute + 120) % 1440;
  return {
    weekly: Object.fromEntries(WEEKDAYS.map((d) => [d, [{ start, end: start + 60 }]])) as WeeklyHours,
    exceptions: [],
  };
}

async function setup({ schedule = closedNow(), reply = REPLY as string | null, locale = undefined as string | undefined } = {}) {
  const t = await createTenant();
  const number = await createSmsNumber(t.business.id);
  await db
    .update(businesses)
    .set({ settings: { after_hours_reply: reply, ...(locale ? { locale } : {}) } })
    .where(eq(businesses.id, t.business.id));
  await storeOpeningHours(t.business.id, [{ locationId: null, schedule }]);
  const client = await createClient(t.business.id);
  return { t, businessId: t.business.id, number: number.phoneNumber, client, schedule };
}

/** Runs the handler through the real dispatcher until it is past the message's `message.received`. */
async function settle(messageId: number) {
  for (const deadline = Date.now() + 20_000; Date.now() < deadline;) {
    while ((await dispatchEvents(afterHoursHandler)) > 0);
    const [past] = await db.execute(sql`
      select 1 from events e join event_handler_cursors c on c.handler = ${AFTER_HOURS_HANDLER}
      where e.message_id = ${messageId} and e.type = 'message.received' and (e.tx_id, e.id) <= (c.tx_id, c.event_id)`);
    if (past) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('the after-hours handler did not catch up');
}

async function text(s: { number: string; client: { phoneNumber: string | null } }, body: string) {
  const form = inboundSmsForm(s.number, s.client.phoneNumber!, body);
  const res = await postTwilio(TWILIO_PATHS.smsIncoming, form);
  expect(res.status).toBe(200);
  const [row] = await db.select().from(messages).where(eq(messages.providerMessageId, form.MessageSid!));
  await settle(row!.id);
  return row!;
}

/** The conversation's after-hours answers. */
const answers = (businessId: number, conversationId: number) =>
  db
    .select()
    .from(messages)
    .where(
      and(
        eq(messages.businessId, businessId),
        eq(messages.conversationId, conversationId),
        sql`${messages.providerMetadata}->>'auto_reply' = 'after_hours'`,
      ),
    );
const outbound = (businessId: number, conversationId: number) =>
  db
    .select()
    .from(messages)
    .where(
      and(eq(messages.businessId, businessId), eq(messages.conversationId, conversationId), eq(messages.direction, 'outbound')),
    );

describe('the after-hours answer to a text', () => {
  it('is a handler of the event log', () => {
    expect(EVENT_HANDLERS.map((h) => h.name)).toContain(AFTER_HOURS_HANDLER);
    expect(afterHoursHandler.types).toEqual(['message.received']);
  });

  it('answers once, at once, naming the next opening; a second text in the same closed period gets none', async () => {
    const s = await setup();
    const first = await text(s, 'Can I book a haircut tomorrow?');
    const [answer, ...more] = await answers(s.businessId, first.conversationId);
    expect(more).toEqual([]);
    const opening = openingClock({ ...s.schedule, timeZone: ZONE }).nextOpening(first.sentAt)!;
    expect(answer).toMatchObject({
      content: `${s.t.business.name}: we are closed. We open ${formatOpening(opening, new Date(), ZONE, 'en-US')} and will answer then.`,
      senderType: 'system',
      direction: 'outbound',
      channel: 'sms',
      status: 'queued',
      holdReason: null,
      fromAddress: s.number,
      toAddress: s.client.phoneNumber,
      providerMetadata: { auto_reply: 'after_hours', in_reply_to_message_id: first.id },
    });
    // Its events, like any message the system queues.
    const events = await db.execute(sql`select type from events where message_id = ${answer!.id} order by id`);
    expect(events.map((e) => e.type)).toContain('message.created');

    await text(s, 'Hello? Anyone?');
    expect(await answers(s.businessId, first.conversationId)).toHaveLength(1);
  });

  it('stays quiet while open, when off, for STOP and HELP, to an opted-out number, and when staff just wrote', async () => {
    const open = await setup({ schedule: ALWAYS_OPEN });
    const a = await text(open, 'Are you open?');
    expect(await outbound(open.businessId, a.conversationId)).toEqual([]);

    const off = await setup({ reply: null });
    const b = await text(off, 'Are you open?');
    expect(await outbound(off.businessId, b.conversationId)).toEqual([]);

    // STOP and HELP get their own answers (Twilio confirms a bare STOP itself), and only those.
    const stop = await setup();
    const c = await text(stop, 'STOP');
    expect(await outbound(stop.businessId, c.conversationId)).toEqual([]);
    const help = await setup();
    const d = await text(help, 'HELP');
    expect((await outbound(help.businessId, d.conversationId)).map((m) => m.providerMetadata?.auto_reply)).toEqual(['help']);

    // An opted-out number: nothing is even queued.
    const out = await setup();
    await db.execute(
      sql`insert into opt_outs (business_id, channel, address, source) values (${out.businessId}, 'sms', ${out.client.phoneNumber}, 'staff')`,
    );
    const e = await text(out, 'Actually, one question');
    expect(await outbound(out.businessId, e.conversationId)).toEqual([]);

    // Staff wrote four minutes ago: they are there.
    const staffed = await setup();
    const f = await text(staffed, 'First question');
    expect(await answers(staffed.businessId, f.conversationId)).toHaveLength(1);
    await db.delete(messages).where(sql`${messages.conversationId} = ${f.conversationId} and ${messages.direction} = 'outbound'`);
    await createMessage(
      { id: f.conversationId, businessId: staffed.businessId, clientId: staffed.client.id },
      { senderType: 'staff', staffId: staffed.t.owner.id, createdAt: new Date(Date.now() - 4 * 60_000) },
    );
    const g = await text(staffed, 'Thanks!');
    expect(await answers(staffed.businessId, g.conversationId)).toEqual([]);
  });

  it('answers once per closed period, not per day: again after the business has opened and closed', async () => {
    // Open 09:00–17:00 every day; Monday 2 March 2026 in New York.
    const nine = { start: 540, end: 1020 };
    const s = await setup({
      schedule: { weekly: Object.fromEntries(WEEKDAYS.map((d) => [d, [nine]])) as WeeklyHours, exceptions: [] },
    });
    const conv = { businessId: s.businessId, clientId: s.client.id };
    const INBOUND = { fromAddress: s.client.phoneNumber, toAddress: s.number };
    const first = await text(s, 'hi'); // answered or not by the real clock: this test's clock is its own
    await db
      .delete(messages)
      .where(sql`${messages.conversationId} = ${first.conversationId} and ${messages.direction} = 'outbound'`);
    const at = (iso: string) => new Date(iso);
    /** An inbound text received at `when`, and the handler's decision at that moment (its answer stamped then too). */
    const receivedAt = async (when: string) => {
      const m = await createMessage(
        { ...conv, id: first.conversationId },
        { ...INBOUND, direction: 'inbound', senderType: 'client', status: 'received', sentAt: at(when), createdAt: at(when) },
      );
      const outcome = await answerAfterHours(s.businessId, m.id, at(when));
      if ('answered' in outcome) {
        await db
          .update(messages)
          .set({ createdAt: at(when), sentAt: at(when) })
          .where(eq(messages.id, outcome.answered));
      }
      return outcome;
    };
    // Monday 20:00 and 23:30, then past midnight Tuesday 03:00: one closed period, one answer.
    expect(await receivedAt('2026-03-03T01:00:00Z')).toHaveProperty('answered');
    expect(await receivedAt('2026-03-03T04:30:00Z')).toEqual({ skipped: 'already answered' });
    expect(await receivedAt('2026-03-03T08:00:00Z')).toEqual({ skipped: 'already answered' });
    // Open on Tuesday at noon: no answer.
    expect(await receivedAt('2026-03-03T17:00:00Z')).toEqual({ skipped: 'open' });
    // Tuesday 18:00: a new closed period, a new answer naming Wednesday 9:00 AM.
    const again = await receivedAt('2026-03-03T23:00:00Z');
    expect(again).toHaveProperty('answered');
    const [answer] = await db
      .select()
      .from(messages)
      .where(eq(messages.id, (again as { answered: number }).answered));
    expect(answer!.content).toContain('We open Wednesday 9:00 AM');
    // A text the handler reaches more than an hour late, or once the period is over, gets none.
    const late = await createMessage(
      { ...conv, id: first.conversationId },
      { ...INBOUND, direction: 'inbound', senderType: 'client', status: 'received', sentAt: at('2026-03-04T23:00:00Z') },
    );
    expect(await answerAfterHours(s.businessId, late.id, new Date(at('2026-03-04T23:00:00Z').getTime() + 2 * HOUR))).toEqual({
      skipped: 'too late',
    });
  });

  it('a location answers with its own text in its own time zone and the business locale', async () => {
    const s = await setup({ locale: 'de-DE' });
    const location = await createLocation(s.businessId, {
      name: 'Mitte',
      timezone: 'Europe/Berlin',
      afterHoursReply: '{location_name} ({business_name}): ab {next_opening} wieder da.',
    });
    await db.execute(sql`update clients set location_id = ${location.id} where id = ${s.client.id}`);
    // Berlin keeps the business's hours, read on its own clock: open one hour from (New York now + 2 h).
    const m = await text(s, 'Hallo');
    const [answer] = await answers(s.businessId, m.conversationId);
    const clock = openingClock({ ...s.schedule, timeZone: 'Europe/Berlin' });
    if (clock.isOpen(m.sentAt)) return expect(answer).toBeUndefined();
    const opening = formatOpening(clock.nextOpening(m.sentAt)!, new Date(), 'Europe/Berlin', 'de-DE');
    expect(answer!.content).toBe(`Mitte (${s.t.business.name}): ab ${opening} wieder da.`);
  });

  it('none at a location whose answer is blank, and none to a text recorded through the API', async () => {
    const s = await setup();
    const quiet = await createLocation(s.businessId, { afterHoursReply: '' });
    await db.execute(sql`update clients set location_id = ${quiet.id} where id = ${s.client.id}`);
    const m = await text(s, 'Anyone there?');
    expect(await outbound(s.businessId, m.conversationId)).toEqual([]);

    const r = await setup();
    const recorded = await submitSms(
      r.businessId,
      {
        category: 'conversational',
        sender_type: 'client',
        messages: [{ client_id: r.client.id, message: 'Sent from elsewhere', direction: 'inbound' }],
      } as Parameters<typeof submitSms>[1],
      'record',
    );
    expect(await answerAfterHours(r.businessId, recorded.message_ids[0]!)).toEqual({ skipped: 'not received through a webhook' });
  });

  it('two texts of one closed period answered concurrently: one answer', async () => {
    const s = await setup();
    const first = await text(s, 'one');
    await db
      .delete(messages)
      .where(sql`${messages.conversationId} = ${first.conversationId} and ${messages.direction} = 'outbound'`);
    const conv = { businessId: s.businessId, clientId: s.client.id, id: first.conversationId };
    const INBOUND = { fromAddress: s.client.phoneNumber, toAddress: s.number };
    const [a, b] = await Promise.all(
      [0, 1].map(() =>
        createMessage(conv, { ...INBOUND, direction: 'inbound', senderType: 'client', status: 'received', sentAt: new Date() }),
      ),
    );
    const outcomes = await Promise.all(
      [a!, b!].map((m) => db.transaction((tx) => answerAfterHours(s.businessId, m.id, new Date(), tx))),
    );
    expect(outcomes.filter((o) => 'answered' in o)).toHaveLength(1);
    expect(outcomes.filter((o) => 'skipped' in o)).toEqual([{ skipped: 'already answered' }]);
    expect(await answers(s.businessId, first.conversationId)).toHaveLength(1);
  });
});

describe('the after-hours answer to an email', () => {
  /** A real inbound email, posted to the webhook as SendGrid's Inbound Parse would, with extra header lines. */
  async function email(s: Awaited<ReturnType<typeof setup>>, from: string, extraHeaders: string[] = []) {
    const messageId = `<${randomUUID()}@mail.example.test>`;
    const fields = {
      headers: [
        `From: ${from}`,
        `To: ${s.t.business.fromEmail}`,
        'Subject: Opening times',
        `Message-ID: ${messageId}`,
        ...extraHeaders,
        'MIME-Version: 1.0',
      ].join('\n'),
      to: s.t.business.fromEmail!,
      from,
      subject: 'Opening times',
      text: 'When are you open?\n',
      charsets: JSON.stringify({ to: 'UTF-8', from: 'UTF-8', subject: 'UTF-8', text: 'UTF-8' }),
    };
    const { contentType, bytes } = await multipartBody(fields, []);
    const res = await postBytes(`${inboundEmailPath()}?secret=dev-inbound-secret`, { 'content-type': contentType }, bytes);
    expect(res.status).toBe(200);
    const [row] = await db
      .select()
      .from(messages)
      .where(and(eq(messages.businessId, s.businessId), eq(messages.emailMessageId, messageId)));
    await settle(row!.id);
    return row!;
  }

  it('a person’s email gets an email answer in its thread', async () => {
    const s = await setup();
    const m = await email(s, `Pat <${s.client.email}>`);
    expect(m.providerMetadata).not.toHaveProperty('automatic');
    const [answer, ...more] = await answers(s.businessId, m.conversationId);
    expect(more).toEqual([]);
    expect(answer).toMatchObject({
      channel: 'email',
      messageType: 'EMAIL',
      senderType: 'system',
      subject: 'Re: Opening times',
      toAddress: s.client.email,
      inReplyTo: m.emailMessageId,
      status: 'queued',
    });
  });

  it('an email a machine wrote gets no answer: no mail loops', async () => {
    const cases: [string, string[], string][] = [
      ['client', ['Auto-Submitted: auto-replied'], 'Auto-Submitted: auto-replied'],
      ['client', ['Precedence: bulk'], 'Precedence: bulk'],
      ['client', ['Precedence: auto_reply'], 'Precedence: auto_reply'],
      ['client', ['Precedence: list'], 'Precedence: list'],
      ['client', ['Precedence: junk'], 'Precedence: junk'],
      ['client', ['List-Id: <news.example.test>'], 'List-Id'],
      ['client', ['List-Unsubscribe: <mailto:leave@news.example.test>'], 'List-Unsubscribe'],
      ['client', ['X-Autoreply: yes'], 'X-Autoreply'],
      ['client', ['X-Autorespond: vacation'], 'X-Autorespond'],
      ['do-not-reply', [], 'no-reply sender'],
      ['postmaster', [], 'no-reply sender'],
      ['noreply', [], 'no-reply sender'],
      ['MAILER-DAEMON', [], 'no-reply sender'],
    ];
    for (const [who, headers, reason] of cases) {
      const s = await setup();
      const from = who === 'client' ? s.client.email! : `${who}@mail.example.test`;
      const m = await email(s, from, headers);
      expect(m.providerMetadata).toMatchObject({ automatic: reason });
      expect(await outbound(s.businessId, m.conversationId)).toEqual([]);
    }
    // Auto-Submitted: no is a person's mail.
    const s = await setup();
    const m = await email(s, s.client.email!, ['Auto-Submitted: no']);
    expect(await answers(s.businessId, m.conversationId)).toHaveLength(1);
  });
});
