import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { db } from '@/server/db/client';
import { QUEUES } from '@/server/jobs/queues';
import { logger } from '@/server/logger';
import type { SmsProvider, SmsSendRequest } from '@/server/providers/types';
import { sendSmsBatch } from '@/server/services/messages/send/sms';
import { createClient, createSmsNumber } from '@/server/testing/factories';
import { getJson, locs, postJson, putJson, restTenant } from '@/server/testing/http';
import { holder, untilBlockedBy } from '@/server/testing/locks';
import { zonedInstant, wallClock } from '@/server/shared/zoned-time';
import { cancelScheduledOnReply } from '@/server/services/messages/lifecycle';
import { cancelScheduledMessage } from '@/server/services/messages/schedule';
import { cancelByExternalId } from './outcomes';
import { upsertAppointment } from './upsert';

/**
 * docs/api.md#review-requests: off by default; when on, a completed appointment gets one scheduled
 * review request after the delay, under the send path's consent, opt-out and quiet-hours rules, at
 * most once per client per cooldown (race-free), canceled when the appointment leaves `completed`.
 * The clock is the services' `now`, set by each test.
 */

const NY = 'America/New_York';
const LINK = 'https://g.page/r/studio/review';
const MINUTE = 60_000;
const DAY = 86_400_000;
const api = { type: 'api' } as const;

/** A business texting all day long on New York's clock, reminders off, and a client who gave marketing consent for texts. */
async function setup(options: { enable?: Record<string, unknown> | false; consent?: ('sms' | 'email')[] } = {}) {
  const t = await restTenant();
  const b = t.business.id;
  await db.execute(sql`update businesses set timezone = ${NY} where id = ${b}`);
  await createSmsNumber(b);
  await putJson(`${t.base}/reminder-rules`, t.key, { rules: [] });
  const client = await createClient(b, { name: 'Ana Lima', timezone: NY });
  await giveConsent(t, client.id, options.consent ?? ['sms']);
  if (options.enable !== false) {
    const res = await putJson(`${t.base}/review-requests`, t.key, { enabled: true, review_link: LINK, ...options.enable });
    expect(res.status).toBe(200);
  }
  return { t, b, client };
}

async function giveConsent(t: Awaited<ReturnType<typeof restTenant>>, clientId: number, channels: ('sms' | 'email')[]) {
  for (const channel of channels) {
    const res = await postJson(`${t.base}/clients/${clientId}/consents`, t.key, {
      channel,
      purpose: 'marketing',
      status: 'given',
    });
    expect(res.status).toBe(200);
  }
}

/** The appointment, upserted as the platform would, at `now`: by default it ended an hour before and is completed. */
const put = (b: number, id: string, clientId: number, now: Date, over: Record<string, unknown> = {}, tx = db) =>
  upsertAppointment(
    b,
    id,
    {
      client_id: clientId,
      starts_at: new Date(now.getTime() - 120 * MINUTE),
      ends_at: new Date(now.getTime() - 60 * MINUTE),
      status: 'completed',
      ...over,
    } as never,
    api,
    now,
    tx,
  );

type Request = {
  message_id: number;
  appointment_id: number;
  active: boolean;
  status: string;
  send_at: Date;
  content: string;
  subject: string | null;
  channel: string;
  category: string;
  notification_type: string;
  sender_type: string;
  cancel_on_reply: boolean;
  hold_reason: string | null;
  error_code: string | null;
};

/** Every review request of the business, oldest first. */
const requests = async (b: number) =>
  (
    await db.execute<Request>(sql`
      select r.message_id, r.appointment_id, r.active, m.status, m.send_at, m.content, m.subject, m.channel, m.category,
             m.notification_type, m.sender_type, m.cancel_on_reply, m.hold_reason, m.error_code
      from review_requests r join messages m on m.business_id = r.business_id and m.id = r.message_id
      where r.business_id = ${b} order by r.message_id`)
  ).map((r) => ({ ...r, message_id: Number(r.message_id), send_at: new Date(r.send_at) }));

/** Messages of the business that are review requests, linked or not: nothing asks outside review_requests. */
const reviewMessages = async (b: number) =>
  Number(
    (
      await db.execute<{ n: number }>(
        sql`select count(*)::int as n from messages where business_id = ${b} and notification_type = 'review_request'`,
      )
    )[0]!.n,
  );

describe('review requests', () => {
  it('are off by default: a completed appointment asks nobody', async () => {
    const { t, b, client } = await setup({ enable: false });
    const settings = await getJson(`${t.base}/review-requests`, t.key);
    expect(settings.body).toMatchObject({
      enabled: false,
      review_link: null,
      delay_minutes: 120,
      channel: 'sms',
      cooldown_days: 90,
      text: settings.body.default_text,
    });
    const { appointment } = await put(b, 'off-1', client.id, new Date());
    await put(b, 'off-2', client.id, new Date(), { status: 'booked' });
    await put(b, 'off-2', client.id, new Date(), { status: 'completed' });
    expect(appointment.review_request).toBeNull();
    // Turned on later: appointments completed before are not asked about, even when they change.
    await putJson(`${t.base}/review-requests`, t.key, { enabled: true, review_link: LINK });
    await put(b, 'off-1', client.id, new Date(), { service: 'Color' });
    expect(await reviewMessages(b)).toBe(0);
  });

  it('schedules one text after the delay, with the same link and words for everyone, answered with the appointment', async () => {
    const { t, b, client } = await setup({ enable: { delay_minutes: 90 } });
    const now = new Date();
    const { appointment } = await put(b, 'r1', client.id, now, { status: 'booked' });
    expect(appointment.review_request).toBeNull();
    const done = await put(b, 'r1', client.id, now, { status: 'completed' });
    const [row, ...rest] = await requests(b);
    expect(rest).toEqual([]);
    expect(row).toMatchObject({
      appointment_id: appointment.appointment_id,
      active: true,
      status: 'scheduled',
      channel: 'sms',
      category: 'campaign',
      notification_type: 'review_request',
      sender_type: 'system',
      cancel_on_reply: false,
      hold_reason: null,
    });
    expect(row!.send_at.getTime()).toBe(now.getTime() + 90 * MINUTE);
    expect(row!.content).toBe(`Thanks for visiting ${t.business.name}! If you have a moment, please leave us a review: ${LINK}`);
    // Its send job waits for send_at.
    const jobs = await db.execute<{ start_after: Date }>(
      sql`select start_after from pgboss.job where name = 'sms.send.later' and (data->>'messageId')::bigint = ${row!.message_id}`,
    );
    expect(jobs.map((j) => new Date(j.start_after).getTime())).toEqual([row!.send_at.getTime()]);
    expect(done.appointment.review_request).toEqual({
      message_id: row!.message_id,
      channel: 'sms',
      status: 'scheduled',
      send_at: row!.send_at.toISOString(),
      error_code: null,
    });
    const read = await getJson(`${t.base}/appointments/r1`, t.key);
    expect(read.body.review_request).toEqual(done.appointment.review_request);
    // A client of its own words: the business's text with variables, the link the same.
    await putJson(`${t.base}/review-requests`, t.key, {
      text: '{client_first_name}, how did {service} go? Review us: {review_link}',
    });
    const other = await createClient(b, { name: 'Bo Chen', timezone: NY });
    await giveConsent(t, other.id, ['sms']);
    await put(b, 'r2', other.id, now, { service: 'Color' });
    expect((await requests(b))[1]!.content).toBe(`Bo, how did Color go? Review us: ${LINK}`);
    // An appointment without the service its words name: none, rather than a `{service}` sent.
    const third = await createClient(b, { timezone: NY });
    await giveConsent(t, third.id, ['sms']);
    expect((await put(b, 'r3', third.id, now)).appointment.review_request).toBeNull();
    // The client writing in meanwhile cancels nothing: whether they are asked never depends on what they say.
    const [conversation] = await db.execute<{ conversation_id: number }>(
      sql`select conversation_id from messages where id = ${row!.message_id}`,
    );
    expect(await cancelScheduledOnReply(b, conversation!.conversation_id, db)).toEqual([]);
    expect(await reviewMessages(b)).toBe(2);
  });

  it('writes none for a business with no number to text from, and stores the completion all the same', async () => {
    const t = await restTenant();
    const b = t.business.id;
    await putJson(`${t.base}/review-requests`, t.key, { enabled: true, review_link: LINK });
    const client = await createClient(b, { timezone: NY });
    await giveConsent(t, client.id, ['sms']);
    const { appointment } = await put(b, 'n1', client.id, new Date());
    expect(appointment).toMatchObject({ status: 'completed', review_request: null });
    // Nothing holds the client's cooldown: once the business can text, the next completion asks.
    await createSmsNumber(b);
    expect((await put(b, 'n2', client.id, new Date())).appointment.review_request).toMatchObject({ status: 'scheduled' });
  });

  it('asks once per appointment however often the completed appointment is upserted, at once or not', async () => {
    const { t, b, client } = await setup();
    const now = new Date();
    await put(b, 'again', client.id, now);
    await put(b, 'again', client.id, now);
    await put(b, 'again', client.id, now, { notes: 'paid' });
    await put(b, 'again', client.id, now, { service: 'Cut', starts_at: new Date(now.getTime() - 3 * 60 * MINUTE) });
    await Promise.all([1, 2, 3].map((n) => put(b, 'again', client.id, now, { notes: `note ${n}` })));
    expect((await requests(b)).map((r) => r.status)).toEqual(['scheduled']);
    // A new appointment completed at once with its twin PUT: still one.
    const other = await createClient(b, { timezone: NY });
    await giveConsent(t, other.id, ['sms']);
    await Promise.all([put(b, 'twin', other.id, now), put(b, 'twin', other.id, now)]);
    expect(await reviewMessages(b)).toBe(2);
  });

  it('asks a client at most once per cooldown, across appointments; the current cooldown applies', async () => {
    const { t, b, client } = await setup();
    const now = new Date();
    await put(b, 'c1', client.id, now);
    const soon = await put(b, 'c2', client.id, new Date(now.getTime() + 1 * DAY));
    const late = await put(b, 'c3', client.id, new Date(now.getTime() + 89 * DAY));
    expect(soon.appointment.review_request).toBeNull();
    expect(late.appointment.review_request).toBeNull();
    const after = await put(b, 'c4', client.id, new Date(now.getTime() + 90 * DAY));
    expect(after.appointment.review_request).toMatchObject({ status: 'scheduled' });
    // Another client is not held by this one's cooldown.
    const other = await createClient(b, { timezone: NY });
    await giveConsent(t, other.id, ['sms']);
    expect((await put(b, 'c5', other.id, now)).appointment.review_request).toMatchObject({ status: 'scheduled' });
    // A shorter cooldown set later counts from the last request.
    await putJson(`${t.base}/review-requests`, t.key, { cooldown_days: 10 });
    expect((await put(b, 'c6', client.id, new Date(now.getTime() + 99 * DAY))).appointment.review_request).toBeNull();
    expect((await put(b, 'c7', client.id, new Date(now.getTime() + 100 * DAY))).appointment.review_request).not.toBeNull();
    expect(await reviewMessages(b)).toBe(4); // c1, c4, c5 (the other client), c7
    // One staff canceled still counts: the business chose not to ask then.
    const third = await createClient(b, { timezone: NY });
    await giveConsent(t, third.id, ['sms']);
    const first = (await put(b, 'c8', third.id, now)).appointment.review_request!;
    await cancelScheduledMessage(b, first.message_id, api);
    expect((await put(b, 'c9', third.id, new Date(now.getTime() + DAY))).appointment.review_request).toBeNull();
  });

  it('two appointments of one client completed at once: the second waits on the first’s cooldown row and asks nobody', async () => {
    const { t, b, client } = await setup();
    const now = new Date();
    const first = holder((tx) => put(b, 'race-1', client.id, now, {}, tx));
    const firstPid = await first.pid;
    const second = put(b, 'race-2', client.id, now);
    // The client had no conversation before: only the cooldown row stands between the two.
    await untilBlockedBy('the second completion waits on the cooldown row', '%review_request_cooldowns%', firstPid);
    first.release();
    await first.done;
    const { appointment } = await second;
    expect(appointment.review_request).toBeNull();
    const rows = await requests(b);
    expect(rows.map((r) => r.appointment_id)).toEqual([(await getAppointmentId(b, 'race-1'))!]);
    // Another client's three completions at once, unordered: one request.
    const other = await createClient(b, { timezone: NY });
    await giveConsent(t, other.id, ['sms']);
    await Promise.all(['u1', 'u2', 'u3'].map((id) => put(b, id, other.id, now)));
    expect(await reviewMessages(b)).toBe(2);
  });

  it('one appointment leaving completed while another of the client completes: the second waits, then takes the freed cooldown', async () => {
    const { b, client } = await setup();
    const now = new Date();
    const asked = (await put(b, 'x1', client.id, now)).appointment.review_request!;
    const leaving = holder((tx) => cancelByExternalId(b, 'x1', api, tx));
    const leavingPid = await leaving.pid;
    const completing = put(b, 'x2', client.id, now);
    // Both take the client's conversation before its cooldown row: the completion waits at the first.
    await untilBlockedBy('the completion waits on the conversation', '%from conversations%for no key update%', leavingPid);
    leaving.release();
    await leaving.done;
    const { appointment } = await completing;
    expect((await requests(b)).map((r) => [r.message_id, r.status, r.active])).toEqual([
      [asked.message_id, 'canceled', false],
      [appointment.review_request!.message_id, 'scheduled', true],
    ]);
  });

  it('keeps to quiet hours: a request due at night waits for the window’s opening', async () => {
    const { b, client } = await setup();
    await db.execute(sql`update businesses set sending_window_start = 540, sending_window_end = 1200 where id = ${b}`);
    const today = wallClock(NY, new Date());
    const evening = zonedInstant(NY, today.year, today.month, today.day, 19, 30);
    await put(b, 'q1', client.id, evening);
    const [row] = await requests(b);
    const next = wallClock(NY, new Date(evening.getTime() + DAY));
    expect(row).toMatchObject({ status: 'scheduled', hold_reason: 'quiet_hours' });
    expect(row!.send_at.getTime()).toBe(zonedInstant(NY, next.year, next.month, next.day, 9, 0).getTime());
  });

  it('without marketing consent: stored failed with the reason, never sent, and the cooldown taken', async () => {
    const { t, b, client } = await setup({ consent: [] });
    const now = new Date();
    const { appointment } = await put(b, 'nc1', client.id, now);
    expect(appointment.review_request).toMatchObject({ status: 'failed', error_code: 'no_marketing_consent' });
    const jobs = await db.execute(
      sql`select 1 from pgboss.job where name like 'sms.send%' and (data->>'messageId')::bigint = ${appointment.review_request!.message_id}`,
    );
    expect(jobs).toHaveLength(0);
    // The failure shows once per cooldown, not after every visit.
    await giveConsent(t, client.id, ['sms']);
    expect((await put(b, 'nc2', client.id, new Date(now.getTime() + DAY))).appointment.review_request).toBeNull();
    expect(await reviewMessages(b)).toBe(1);
  });

  it('at send time: goes with its link while consent stands, never once consent is withdrawn meanwhile', async () => {
    const { t, b, client } = await setup();
    const other = await createClient(b, { timezone: NY });
    await giveConsent(t, other.id, ['sms']);
    const now = new Date();
    const kept = (await put(b, 's1', client.id, now)).appointment.review_request!.message_id;
    const withdrawn = (await put(b, 's2', other.id, now)).appointment.review_request!.message_id;
    await postJson(`${t.base}/clients/${other.id}/consents`, t.key, {
      channel: 'sms',
      purpose: 'marketing',
      status: 'withdrawn',
    });
    // Their time has come.
    await db.execute(sql`update messages set send_at = now() - interval '1 minute' where id in (${kept}, ${withdrawn})`);
    const sent: SmsSendRequest[] = [];
    const provider: SmsProvider = {
      name: 'twilio',
      send: async (request) => {
        sent.push(request);
        return { providerMessageId: `SM${request.messageId}`, status: 'queued' };
      },
      findSent: async () => null,
    };
    const jobs = [kept, withdrawn].map(
      (messageId) =>
        ({
          id: randomUUID(),
          name: QUEUES.smsSendLater,
          data: { messageId, businessId: b },
          retryCount: 0,
          retryLimit: 5,
        }) as never,
    );
    await sendSmsBatch(jobs, provider, 'http://localhost/status', logger);
    expect(sent.map((r) => [r.messageId, r.body.endsWith(LINK)])).toEqual([[kept, true]]);
    expect((await requests(b)).map((r) => [r.message_id, r.status, r.error_code])).toEqual([
      [kept, 'sent', null],
      [withdrawn, 'failed', 'no_marketing_consent'],
    ]);
  });

  it('never to an opted-out number: by email instead, or nothing when both are opted out', async () => {
    const { t, b } = await setup();
    const now = new Date();
    const noTexts = await createClient(b, { name: 'Cy Dorn', timezone: NY, optedOutSms: true });
    await giveConsent(t, noTexts.id, ['sms', 'email']);
    const { appointment } = await put(b, 'o1', noTexts.id, now);
    const [email] = await requests(b);
    expect(email).toMatchObject({ channel: 'email', status: 'scheduled', subject: `Would you review ${t.business.name}?` });
    expect(email!.content).toContain(LINK);
    expect(appointment.review_request).toMatchObject({ channel: 'email' });
    const neither = await createClient(b, { timezone: NY, optedOutSms: true, optedOutEmail: true });
    await giveConsent(t, neither.id, ['sms', 'email']);
    expect((await put(b, 'o2', neither.id, now)).appointment.review_request).toBeNull();
    const unreachable = await createClient(b, { timezone: NY, phoneNumber: null, email: null });
    expect((await put(b, 'o2b', unreachable.id, now)).appointment.review_request).toBeNull();
    // Texts preferred, but the client's consent is for email only: email.
    const emailOnly = await createClient(b, { timezone: NY });
    await giveConsent(t, emailOnly.id, ['email']);
    expect((await put(b, 'o3', emailOnly.id, now)).appointment.review_request).toMatchObject({ channel: 'email' });
    // Email preferred by the business.
    await putJson(`${t.base}/review-requests`, t.key, { channel: 'email' });
    const both = await createClient(b, { timezone: NY });
    await giveConsent(t, both.id, ['sms', 'email']);
    expect((await put(b, 'o4', both.id, now)).appointment.review_request).toMatchObject({ channel: 'email' });
    expect(await reviewMessages(b)).toBe(3);
  });

  it('is canceled when the appointment leaves completed before it goes, and that client can be asked again', async () => {
    const { b, client } = await setup();
    const now = new Date();
    await put(b, 'l1', client.id, now);
    const back = await put(b, 'l1', client.id, now, { status: 'booked' });
    expect(back.appointment.review_request).toMatchObject({ status: 'canceled', error_code: 'appointment_not_completed' });
    expect((await requests(b)).map((r) => r.active)).toEqual([false]);
    // Completed again: asked again (the canceled one never reached the client).
    await put(b, 'l1', client.id, now, { status: 'completed' });
    expect((await requests(b)).map((r) => [r.status, r.active])).toEqual([
      ['canceled', false],
      ['scheduled', true],
    ]);
    // DELETE (the outcome path) cancels it the same way.
    const deleted = await cancelByExternalId(b, 'l1', api);
    expect(deleted.review_request).toMatchObject({ status: 'canceled', error_code: 'appointment_not_completed' });
    // One that already went stays as it went.
    await put(b, 'l1', client.id, now, { status: 'completed' });
    const sent = (await requests(b)).at(-1)!;
    await db.execute(sql`update messages set status = 'sent' where id = ${sent.message_id}`);
    await put(b, 'l1', client.id, now, { status: 'no_show' });
    expect((await requests(b)).at(-1)).toMatchObject({ message_id: sent.message_id, status: 'sent', active: true });
    // ...and holds the cooldown.
    expect((await put(b, 'l2', client.id, now)).appointment.review_request).toBeNull();
    const logged = await db.execute<{ n: number }>(sql`
      select count(*)::int as n from events where business_id = ${b} and type = 'message.status_updated'
        and data->>'status' = 'canceled' and actor_type = 'api'`);
    expect(logged[0]!.n).toBe(2);
  });

  it('asks nobody about a visit that ended more than 7 days before it was marked completed', async () => {
    const { b, client } = await setup();
    const now = new Date();
    const old = await put(b, 'h1', client.id, now, {
      starts_at: new Date(now.getTime() - 8 * DAY - 60 * MINUTE),
      ends_at: new Date(now.getTime() - 8 * DAY),
    });
    expect(old.appointment.review_request).toBeNull();
    expect((await put(b, 'h2', client.id, now)).appointment.review_request).not.toBeNull();
  });
});

describe('review request settings over REST', () => {
  it('keeps fields left out, brings back the default text with null, and keeps to its business', async () => {
    const t = await restTenant();
    const put1 = await putJson(`${t.base}/review-requests`, t.key, {
      enabled: true,
      review_link: LINK,
      delay_minutes: 30,
      channel: 'email',
      cooldown_days: 30,
      text: 'Review us: {review_link}',
    });
    expect(put1.status).toBe(200);
    const put2 = await putJson(`${t.base}/review-requests`, t.session, { delay_minutes: 45, text: null });
    expect(put2.body).toMatchObject({
      business_id: t.business.id,
      enabled: true,
      review_link: LINK,
      delay_minutes: 45,
      channel: 'email',
      cooldown_days: 30,
      text: put2.body.default_text,
    });
    expect((await getJson(`${t.base}/review-requests`, t.key)).body).toEqual(put2.body);
    const other = await restTenant();
    expect((await getJson(`${t.base}/review-requests`, other.key)).status).toBe(403);
    expect((await putJson(`${t.base}/review-requests`, other.key, { enabled: false })).status).toBe(403);
    expect((await putJson(`${t.base}/review-requests`, other.session, { enabled: false })).status).toBe(403);
    expect((await getJson(`${t.base}/review-requests`, t.key)).body.enabled).toBe(true);
    expect((await getJson(`${other.base}/review-requests`, other.key)).body.enabled).toBe(false);
  });

  it('refuses bad settings with a 422 at the field, storing nothing', async () => {
    const t = await restTenant();
    const bad = async (body: Record<string, unknown>) => {
      const res = await putJson(`${t.base}/review-requests`, t.key, body);
      expect(res.status).toBe(422);
      return locs(res.body);
    };
    expect(await bad({ review_link: 'http://g.page/r/x' })).toEqual([['body', 'review_link']]);
    expect(await bad({ review_link: 'our review page' })).toEqual([['body', 'review_link']]);
    expect(await bad({ review_link: `https://example.com/${'x'.repeat(500)}` })).toEqual([['body', 'review_link']]);
    expect(await bad({ delay_minutes: 14 })).toEqual([['body', 'delay_minutes']]);
    expect(await bad({ delay_minutes: 10081 })).toEqual([['body', 'delay_minutes']]);
    expect(await bad({ delay_minutes: 1.5 })).toEqual([['body', 'delay_minutes']]);
    expect(await bad({ cooldown_days: 0 })).toEqual([['body', 'cooldown_days']]);
    expect(await bad({ cooldown_days: 731 })).toEqual([['body', 'cooldown_days']]);
    expect(await bad({ channel: 'voice' })).toEqual([['body', 'channel']]);
    expect(await bad({ text: 'Please review us!' })).toEqual([['body', 'text']]);
    expect(await bad({ text: '{first_name}, review us: {review_link}' })).toEqual([['body', 'text']]);
    expect(await bad({ text: `${'x'.repeat(1600)} {review_link}` })).toEqual([['body', 'text']]);
    expect(await bad({ enabled: 'yes' })).toEqual([['body', 'enabled']]);
    // On without a link to send.
    expect(await bad({ enabled: true })).toEqual([['body', 'review_link']]);
    await putJson(`${t.base}/review-requests`, t.key, { enabled: true, review_link: LINK });
    expect(await bad({ review_link: null })).toEqual([['body', 'review_link']]);
    expect((await getJson(`${t.base}/review-requests`, t.key)).body).toMatchObject({ enabled: true, review_link: LINK });
  });
});

async function getAppointmentId(b: number, externalId: string) {
  const [row] = await db.execute<{ id: number }>(
    sql`select id from appointments where business_id = ${b} and external_id = ${externalId}`,
  );
  return row?.id;
}
