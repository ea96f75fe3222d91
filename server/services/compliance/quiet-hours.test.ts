import { eq, sql } from 'drizzle-orm';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { db } from '@/server/db/client';
import { businesses } from '@/db/schema';
import {
  createBusiness,
  createClient,
  createConversation,
  createLocation,
  createMessage,
  createSmsNumber,
} from '@/server/testing/factories';
import { deleteJson, getJson, locs, postJson, putJson, restTenant, type RestTenant } from '@/server/testing/http';
import { messageOf } from '@/server/testing/messages';
import { DEFAULT_SENDING_WINDOW, nextOpening } from '@/server/shared/quiet-hours';
import { submitSms } from '@/server/services/messages/submit';
import { recordConsent } from './consent';
import { rescheduleMessage, sendScheduledNow } from '@/server/services/messages/schedule';
import { conversationQuietHours, recipientWindow, sendingRules, type SendingRules } from './quiet-hours';

/**
 * Quiet hours (docs/api.md#quiet-hours): which texts wait for the recipient's sending window, whose
 * clock they go by, and the settings over REST. The worker's check at send time is in
 * workers/send-later.test.ts. "Now" is set with a fake Date clock (the database's own clock is not
 * involved in the decision at queue time).
 */

let t: RestTenant;
beforeAll(async () => {
  t = await restTenant();
  await createSmsNumber(t.business.id);
  // Test businesses send all day (server/testing/factories.ts); this one keeps the default window.
  await db.update(businesses).set({ sendingWindowStart: 480, sendingWindowEnd: 1260 }).where(eq(businesses.id, t.business.id));
});
afterEach(() => vi.useRealTimers());

/** 2026-11-30 21:05 in Chicago (CST, UTC−6); the window opens again 2026-12-01 08:00 CST = 14:00Z. */
const CHICAGO_21_05 = new Date('2026-12-01T03:05:00Z');
const CHICAGO_20_59 = new Date('2026-12-01T02:59:00Z');
const CHICAGO_OPENS = '2026-12-01T14:00:00.000Z';

function at(now: Date) {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(now);
}

let n = 0;
/** A client in Chicago by their own time zone (their number is a New York one: the client's zone wins). */
const chicagoClient = (overrides: Parameters<typeof createClient>[1] = {}) =>
  createClient(t.business.id, { timezone: 'America/Chicago', phoneNumber: `+1212555${String(1000 + n++)}`, ...overrides });

async function send(clientId: number, envelope: Record<string, unknown>) {
  const result = await submitSms(
    t.business.id,
    {
      sender_type: 'system',
      category: 'conversational',
      ...envelope,
      messages: [{ client_id: clientId, message: 'Hi' }],
    } as never,
    'send',
  );
  return messageOf(result.message_ids[0]!);
}

/** One request of automated reminders (held by quiet hours) to several recipients. */
const sendReminders = (messages: ({ client_id: number; message: string } | { to_number: string; message: string })[]) =>
  submitSms(t.business.id, { sender_type: 'system', category: 'reminder', messages } as never, 'send');

async function jobsOf(messageId: number) {
  return db.execute<{ name: string; start_after: Date }>(
    sql`select name, start_after from pgboss.job where (data->>'messageId')::bigint = ${messageId} order by created_on`,
  );
}

describe('quiet hours at queue time', () => {
  it('holds an automated reminder queued at 21:05 local until 08:00 local, visibly, with a send-later job', async () => {
    at(CHICAGO_21_05);
    const client = await chicagoClient();
    const m = await send(client.id, { category: 'reminder', notification_type: 'appointment_reminder' });
    expect(m).toMatchObject({ status: 'scheduled', holdReason: 'quiet_hours' });
    expect(m.sendAt?.toISOString()).toBe(CHICAGO_OPENS);
    expect(m.quietHours).toEqual({ time_zone: 'America/Chicago', ...DEFAULT_SENDING_WINDOW });
    const jobs = await jobsOf(m.id);
    expect(jobs.map((j) => j.name)).toEqual(['sms.send.later']);
    expect(new Date(jobs[0]!.start_after).toISOString()).toBe(CHICAGO_OPENS);
  });

  it('sends the same reminder at once at 20:59 local, still keeping to the window', async () => {
    at(CHICAGO_20_59);
    const m = await send((await chicagoClient()).id, { category: 'reminder' });
    expect(m).toMatchObject({ status: 'queued', holdReason: null });
    expect(m.quietHours).toEqual({ time_zone: 'America/Chicago', ...DEFAULT_SENDING_WINDOW });
    expect((await jobsOf(m.id)).map((j) => j.name)).toEqual(['sms.send']);
  });

  it('holds campaigns, transactional texts, and marketing or review requests even when called conversational', async () => {
    at(CHICAGO_21_05);
    for (const envelope of [
      { category: 'transactional' },
      { category: 'conversational', notification_type: 'review_request' },
      { category: 'conversational', notification_type: 'marketing' },
    ]) {
      const client = await chicagoClient();
      // Marketing and review requests need the client's marketing consent (docs: Consent) before anything else.
      await recordConsent(
        t.business.id,
        client.id,
        { channel: 'sms', purpose: 'marketing', status: 'given', source: 'web_form' } as never,
        null,
      );
      const m = await send(client.id, envelope);
      expect(m.status, JSON.stringify(envelope)).toBe('scheduled');
      expect(m.holdReason).toBe('quiet_hours');
    }
  });

  it('does not hold a conversational reply, nor a text whose request overrides quiet hours', async () => {
    at(CHICAGO_21_05);
    const reply = await send((await chicagoClient()).id, { category: 'conversational' });
    expect(reply).toMatchObject({ status: 'queued', holdReason: null, quietHours: null });
    const overridden = await send((await chicagoClient()).id, { category: 'reminder', override_quiet_hours: true });
    expect(overridden).toMatchObject({ status: 'queued', holdReason: null, quietHours: null });
  });

  it('moves a send_at that falls in the night to the next opening', async () => {
    at(new Date('2026-11-30T18:00:00Z')); // 12:00 in Chicago
    const m = await send((await chicagoClient()).id, {
      category: 'reminder',
      send_at: new Date('2026-12-01T04:00:00Z'), // 22:00 in Chicago
    });
    expect(m).toMatchObject({ status: 'scheduled', holdReason: 'quiet_hours' });
    expect(m.sendAt?.toISOString()).toBe(CHICAGO_OPENS);
    const inWindow = await send((await chicagoClient()).id, { category: 'reminder', send_at: new Date('2026-11-30T20:00:00Z') });
    expect(inWindow).toMatchObject({ status: 'scheduled', holdReason: null });
    expect(inWindow.sendAt?.toISOString()).toBe('2026-11-30T20:00:00.000Z');
  });

  it("keeps to the client's location's own window instead of the business's", async () => {
    const location = await createLocation(t.business.id, { sendingWindowStart: 8 * 60, sendingWindowEnd: 20 * 60 });
    at(new Date('2026-12-01T02:05:00Z')); // 20:05 in Chicago: inside 08–21, outside Florida's 08–20
    const m = await send((await chicagoClient({ locationId: location.id })).id, { category: 'campaign' });
    expect(m.status).toBe('failed'); // a campaign needs marketing consent first (docs: Consent) …
    const reminder = await send((await chicagoClient({ locationId: location.id })).id, { category: 'reminder' });
    expect(reminder).toMatchObject({ status: 'scheduled', holdReason: 'quiet_hours' });
    expect(reminder.quietHours).toMatchObject({ start: 480, end: 1200 });
    const elsewhere = await send((await chicagoClient()).id, { category: 'reminder' });
    expect(elsewhere.status).toBe('queued');
  });

  it('says in the answer how many texts wait for quiet hours', async () => {
    at(CHICAGO_21_05);
    const result = await sendReminders([
      { client_id: (await chicagoClient()).id, message: 'a' },
      { to_number: '+13055550111', message: 'b' },
    ]);
    // The new lead's number is a Miami one (Eastern): 22:05 there, held as well.
    expect(result.message).toMatch(/2 held for quiet hours/);
    const lead = await messageOf(result.message_ids[1]!);
    expect(lead.quietHours?.time_zone).toBe('America/New_York');
    expect(lead.sendAt?.toISOString()).toBe('2026-12-01T13:00:00.000Z');
  });

  it('gives each recipient of one request the opening of its own window', async () => {
    const nineToEight = await createLocation(t.business.id, { sendingWindowStart: 9 * 60, sendingWindowEnd: 20 * 60 });
    at(CHICAGO_21_05);
    const result = await sendReminders([
      { client_id: (await chicagoClient()).id, message: 'a' },
      { client_id: (await chicagoClient({ locationId: nineToEight.id })).id, message: 'b' },
      { to_number: '+13055550112', message: 'c' },
      { client_id: (await chicagoClient()).id, message: 'd' },
    ]);
    const sendAts = await Promise.all(result.message_ids.map(async (id) => (await messageOf(id)).sendAt?.toISOString()));
    // 08:00 Chicago, 09:00 Chicago (the location's window), 08:00 New York, 08:00 Chicago.
    expect(sendAts).toEqual([CHICAGO_OPENS, '2026-12-01T15:00:00.000Z', '2026-12-01T13:00:00.000Z', CHICAGO_OPENS]);
  });
});

describe("the recipient's clock", () => {
  const rules: SendingRules = {
    business: { timeZone: 'Europe/Lisbon', window: DEFAULT_SENDING_WINDOW },
    locations: new Map([
      [1, { timeZone: 'America/Denver', window: { start: 540, end: 1200 } }],
      [2, { timeZone: null, window: null }],
    ]),
  };

  it("is the client's own zone, else their number's, else the location's, else the business's", () => {
    const clientZone = { timeZone: 'America/Chicago', phoneNumber: '+14155550100', locationId: 1 };
    expect(recipientWindow(rules, clientZone)).toMatchObject({ time_zone: 'America/Chicago', source: 'client', start: 540 });
    expect(recipientWindow(rules, { ...clientZone, timeZone: null })).toMatchObject({
      time_zone: 'America/Los_Angeles',
      source: 'phone_number',
    });
    // A toll-free number belongs to no one zone: the location's clock.
    expect(recipientWindow(rules, { timeZone: null, phoneNumber: '+18005550100', locationId: 1 })).toMatchObject({
      time_zone: 'America/Denver',
      source: 'location',
    });
    expect(recipientWindow(rules, { timeZone: null, phoneNumber: null, locationId: 2 })).toEqual({
      time_zone: 'Europe/Lisbon',
      source: 'business',
      ...DEFAULT_SENDING_WINDOW,
    });
  });
});

describe('the inbox composer', () => {
  async function staffReply(conversation: { id: number; clientId: number }, sendNow = false) {
    const result = await submitSms(
      t.business.id,
      {
        sender_type: 'staff',
        category: 'conversational',
        messages: [{ client_id: conversation.clientId, message: 'Hello' }],
      } as never,
      'send',
      { staffReply: { conversationId: conversation.id, sendNow } },
    );
    return messageOf(result.message_ids[0]!);
  }

  it('holds a staff text in a conversation that is not live, unless staff confirm sending now', async () => {
    at(CHICAGO_21_05);
    const client = await chicagoClient();
    const conversation = await createConversation(t.business.id, client.id);
    const quiet = await conversationQuietHours(t.business.id, { ...conversation, locationId: null }, CHICAGO_21_05);
    expect(quiet).toMatchObject({ open: false, live: false, time_zone: 'America/Chicago', local_minute: 21 * 60 + 5 });
    expect(quiet.next_opening?.toISOString()).toBe(CHICAGO_OPENS);
    expect(await staffReply(conversation)).toMatchObject({ status: 'scheduled', holdReason: 'quiet_hours' });
    expect(await staffReply(conversation, true)).toMatchObject({ status: 'queued', holdReason: null });
  });

  it('does not hold a reply while the conversation is live (the client wrote within a day)', async () => {
    at(CHICAGO_21_05);
    const client = await chicagoClient();
    const conversation = await createConversation(t.business.id, client.id);
    await createMessage(conversation, {
      direction: 'inbound',
      status: 'received',
      sentAt: new Date(CHICAGO_21_05.getTime() - 3_600_000),
    });
    expect((await conversationQuietHours(t.business.id, { ...conversation, locationId: null }, CHICAGO_21_05)).live).toBe(true);
    expect(await staffReply(conversation)).toMatchObject({ status: 'queued', holdReason: null });
  });
});

describe('a held text afterwards', () => {
  it('rescheduled into the night, waits for the opening; sent now, goes at once without quiet hours', async () => {
    at(CHICAGO_21_05);
    const m = await send((await chicagoClient()).id, { category: 'reminder' });
    vi.useRealTimers();
    // A night two days ahead of the real clock, in Chicago.
    const night = nextOpening('America/Chicago', { start: 23 * 60, end: 23 * 60 + 1 }, new Date(Date.now() + 2 * 86_400_000));
    const moved = await rescheduleMessage(t.business.id, m.id, night, { type: 'api' });
    expect(moved.data.hold_reason).toBe('quiet_hours');
    expect(new Date(moved.data.send_at!).getTime()).toBe(nextOpening('America/Chicago', DEFAULT_SENDING_WINDOW, night).getTime());
    const now = await sendScheduledNow(t.business.id, m.id, { type: 'api' });
    expect(now.data).toMatchObject({ message_status: 'scheduled', hold_reason: null, quiet_hours: null });
    expect((await jobsOf(m.id)).map((j) => j.name)).toContain('sms.send');
    await expect(
      sendScheduledNow(t.business.id, (await send((await chicagoClient()).id, {})).id, { type: 'api' }),
    ).rejects.toMatchObject({
      code: 'conflict',
    });
  });
});

/** An array bound as text[] (postgres.js infers array types from the first element), cast in SQL. */
const texts = (values: (string | number)[]) => sql`${sql.param(values.map(String))}::text[]`;

describe('the sending window in the database', () => {
  it('opens at the same moments as the rule the requests use, across daylight-saving changes', async () => {
    const zones = [
      'America/New_York',
      'America/Chicago',
      'America/Los_Angeles',
      'Pacific/Honolulu',
      'Europe/London',
      'Australia/Lord_Howe',
    ];
    const windows = [DEFAULT_SENDING_WINDOW, { start: 480, end: 1200 }, { start: 0, end: 1440 }, { start: 150, end: 200 }];
    const starts = ['2026-11-01T00:00:00Z', '2027-03-13T20:00:00Z', '2027-03-28T00:00:00Z', '2026-10-04T14:00:00Z'];
    const cases = zones.flatMap((zone) =>
      windows.flatMap((w) =>
        starts.flatMap((s) =>
          Array.from({ length: 12 }, (_, i) => ({ zone, w, at: new Date(new Date(s).getTime() + i * 97 * 60_000) })),
        ),
      ),
    );
    const rows = await db.execute<{ i: number; opens: Date }>(sql`
      select c.i, sending_window_next_open(c.zone, c.start, c."end", c.at) as opens
      from unnest(${texts(cases.map((c) => c.zone))}, ${texts(cases.map((c) => c.w.start))}::int[],
                  ${texts(cases.map((c) => c.w.end))}::int[], ${texts(cases.map((c) => c.at.toISOString()))}::timestamptz[])
        with ordinality as c(zone, start, "end", at, i)`);
    for (const row of rows) {
      const c = cases[row.i - 1]!;
      expect(new Date(row.opens).toISOString(), `${c.zone} ${JSON.stringify(c.w)} ${c.at.toISOString()}`).toBe(
        nextOpening(c.zone, c.w, c.at).toISOString(),
      );
    }
  });
});

describe('settings over REST', () => {
  it("reads and sets the business's window and a location's own, with the presets", async () => {
    const location = await createLocation(t.business.id, { name: 'Miami', timezone: 'America/New_York' });
    const before = await getJson(`${t.base}/sending-window`, t.key);
    expect(before.status).toBe(200);
    expect(before.body.sending_window).toEqual({ start: '08:00', end: '21:00' });
    expect(before.body.presets.map((p: { id: string }) => p.id)).toEqual([
      'us_federal',
      'us_florida',
      'us_oklahoma',
      'us_maryland',
    ]);

    const put = await putJson(`${t.base}/sending-window`, t.key, { start: '09:00', end: '20:30' });
    expect(put.status).toBe(200);
    expect(put.body.sending_window).toEqual({ start: '09:00', end: '20:30' });
    const own = await putJson(`${t.base}/locations/${location.id}/sending-window`, t.key, { start: '08:00', end: '20:00' });
    expect(own.body.locations.find((l: { location_id: number }) => l.location_id === location.id).sending_window).toEqual({
      start: '08:00',
      end: '20:00',
    });
    const listed = await getJson(`${t.base}/locations`, t.key);
    expect(listed.body.find((l: { location_id: number }) => l.location_id === location.id).sending_window).toEqual({
      start: '08:00',
      end: '20:00',
    });
    const rules = await sendingRules(t.business.id);
    expect(rules.business.window).toEqual({ start: 540, end: 1230 });
    const cleared = await deleteJson(`${t.base}/locations/${location.id}/sending-window`, t.key);
    expect(cleared.body.locations.find((l: { location_id: number }) => l.location_id === location.id).sending_window).toBeNull();
    await putJson(`${t.base}/sending-window`, t.key, { start: '08:00', end: '21:00' });
  });

  it('refuses a malformed or empty window with the field, and a location of another business', async () => {
    const bad = await putJson(`${t.base}/sending-window`, t.key, { start: '25:00', end: '21:00' });
    expect(bad.status).toBe(422);
    expect(locs(bad.body)).toEqual([['body', 'start']]);
    const backwards = await putJson(`${t.base}/sending-window`, t.key, { start: '21:00', end: '08:00' });
    expect(backwards.status).toBe(422);
    expect(locs(backwards.body)).toEqual([['body', 'end']]);
    const other = await createBusiness();
    const foreign = await createLocation(other.id);
    const res = await putJson(`${t.base}/locations/${foreign.id}/sending-window`, t.key, { start: '08:00', end: '20:00' });
    expect(res.status).toBe(404);
  });

  it('lets a request override quiet hours', async () => {
    const res = await postJson(`${t.base}/sms`, t.key, {
      sender_type: 'system',
      category: 'reminder',
      override_quiet_hours: true,
      messages: [{ to_number: '+13055550123', message: 'Your table is ready' }],
    });
    expect(res.status).toBe(200);
    const m = await messageOf(res.body.message_ids[0]);
    expect(m).toMatchObject({ status: 'queued', quietHours: null });
  });
});
