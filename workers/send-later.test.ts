import { randomBytes } from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { db } from '@/server/db/client';
import { messages } from '@/db/schema';
import { nextOpening } from '@/server/shared/quiet-hours';
import { createSmsNumber, createTenant } from '@/server/testing/factories';
import { startFakeTwilio, type FakeTwilio } from '@/server/testing/fake-twilio';
import { getJson, postJson } from '@/server/testing/http';
import { messageOf } from '@/server/testing/messages';
import { fakeProvidersEnv, startSmtpSink, type SmtpSink } from '@/server/testing/smtp-sink';
import { startWorker } from './index';

/**
 * Send later through the real worker (docs/api.md#send-later): a scheduled SMS is not sent before
 * its send_at, is sent exactly once after it, and, when no worker runs at that moment, goes once
 * the worker is back, with the delay visible (sent_at − send_at).
 */
const ENV_KEYS = ['SMS_PROVIDER', 'TWILIO_ACCOUNT_SID', 'TWILIO_AUTH_TOKEN', 'TWILIO_API_BASE_URL', 'EMAIL_PROVIDER', 'SMTP_URL'];
const savedEnv = Object.fromEntries(ENV_KEYS.map((k) => [k, process.env[k]]));
const runId = randomBytes(4).toString('hex');

let fake: FakeTwilio;
let sink: SmtpSink;
let tenant: Awaited<ReturnType<typeof createTenant>>;
const creates: { at: number; body: string }[] = [];

beforeAll(async () => {
  fake = await startFakeTwilio();
  sink = await startSmtpSink();
  Object.assign(process.env, fakeProvidersEnv(fake, sink));
  fake.setBehavior((req) => {
    creates.push({ at: Date.now(), body: req.body });
    return null;
  });
  tenant = await createTenant();
  await createSmsNumber(tenant.business.id);
});

afterAll(async () => {
  await fake?.close();
  await sink?.close();
  for (const k of ENV_KEYS) {
    if (savedEnv[k] === undefined) delete process.env[k];
    else process.env[k] = savedEnv[k];
  }
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function scheduleSms(body: string, to: string, inMs: number) {
  const sendAt = new Date(Date.now() + inMs);
  const res = await postJson(
    `/api/v1/businesses/${tenant.business.id}/sms`,
    { 'x-api-key': tenant.apiKey },
    {
      sender_type: 'staff',
      send_at: sendAt.toISOString(),
      messages: [{ to_number: to, message: body }],
    },
  );
  expect(res.status).toBe(200);
  return { id: (res.body.message_ids as number[])[0]!, sendAt };
}

async function settled(id: number, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const row = await messageOf(id);
    if (row.status === 'sent') return row;
    if (Date.now() > deadline) throw new Error(`message ${id} still ${row.status}`);
    await sleep(100);
  }
}

const atFake = (body: string) => creates.filter((c) => c.body === body);

describe('scheduled sends through the worker', () => {
  it('is not sent before send_at, then sent exactly once', async () => {
    const worker = await startWorker();
    try {
      const body = `Reminder: tomorrow 9:00 ${runId}`;
      const { id, sendAt } = await scheduleSms(body, '+14155550101', 5_000);
      // A second before send_at, however long scheduling took on a busy machine.
      await sleep(sendAt.getTime() - 1_000 - Date.now());
      expect((await messageOf(id)).status).toBe('scheduled');
      expect(atFake(body)).toHaveLength(0);
      const row = await settled(id);
      expect(atFake(body)).toHaveLength(1);
      expect(atFake(body)[0]!.at).toBeGreaterThanOrEqual(sendAt.getTime());
      expect(row.sentAt.getTime()).toBeGreaterThanOrEqual(sendAt.getTime());
      await sleep(1_000);
      expect(atFake(body)).toHaveLength(1);
    } finally {
      await worker.stop();
    }
  });

  it('once it goes, a scheduled text is its conversation’s latest: the list previews it and moves the conversation up', async () => {
    const record = (to: string, message: string) =>
      postJson(
        `/api/v1/businesses/${tenant.business.id}/sms/record`,
        { 'x-api-key': tenant.apiKey },
        { sender_type: 'client', messages: [{ to_number: to, message, direction: 'inbound' }] },
      );
    const list = async () =>
      (await getJson(`/api/v1/businesses/${tenant.business.id}/conversations?page_size=100`, { 'x-api-key': tenant.apiKey })).body
        .conversations as { conversation_id: number; last_message_id: number; last_message_content: string }[];
    const worker = await startWorker();
    try {
      const body = `See you at 10 ${runId}`;
      // The client writes in after it was scheduled (a record does not cancel it), then another client.
      const { id } = await scheduleSms(body, '+14155550103', 3_000);
      const conversationId = (await messageOf(id)).conversationId;
      expect((await record('+14155550103', `Can I bring my sister? ${runId}`)).status).toBe(200);
      expect((await record('+14155550104', `Hello from another client ${runId}`)).status).toBe(200);
      const before = await list();
      expect(before[0]!.last_message_content).toBe(`Hello from another client ${runId}`);
      expect(before.find((c) => c.conversation_id === conversationId)!.last_message_content).toBe(
        `Can I bring my sister? ${runId}`,
      );

      await settled(id);
      const after = await list();
      expect(after[0]).toMatchObject({ conversation_id: conversationId, last_message_id: id, last_message_content: body });
    } finally {
      await worker.stop();
    }
  });

  it('with no worker at send_at: sent once when a worker is back, and the delay shows', async () => {
    const body = `Reminder while the worker is down ${runId}`;
    const { id, sendAt } = await scheduleSms(body, '+14155550102', 1_000);
    await sleep(3_000);
    expect((await messageOf(id)).status).toBe('scheduled');
    const worker = await startWorker();
    try {
      const row = await settled(id);
      expect(atFake(body)).toHaveLength(1);
      expect(row.sendAt!.getTime()).toBe(sendAt.getTime());
      expect(row.sentAt.getTime() - sendAt.getTime()).toBeGreaterThanOrEqual(1_900);
    } finally {
      await worker.stop();
    }
    // A second worker start finds nothing more to send.
    const again = await startWorker();
    await sleep(1_000);
    await again.stop();
    expect(atFake(body)).toHaveLength(1);
  });
});

describe('quiet hours at send time (docs/api.md#quiet-hours)', () => {
  /** A one-hour window that is closed now in UTC (it opens two hours from now, or earlier today). */
  function closedWindow() {
    const now = new Date();
    const minute = now.getUTCHours() * 60 + now.getUTCMinutes();
    // One hour starting two hours from now, wrapped into the day (and kept within it).
    const start = Math.min((minute + 120) % 1440, 1380);
    return { time_zone: 'UTC', start, end: start + 60 };
  }

  it('a scheduled text whose moment passed while no worker ran waits for the next opening instead of going at night', async () => {
    const body = `Reminder held at send time ${runId}`;
    const { id } = await scheduleSms(body, '+14155550103', 1_000);
    const window = closedWindow();
    await db.update(messages).set({ quietHours: window }).where(eq(messages.id, id));
    await sleep(1_500); // send_at passes with no worker running
    const worker = await startWorker();
    try {
      let row = await messageOf(id);
      for (const deadline = Date.now() + 10_000; row.holdReason === null && Date.now() < deadline; row = await messageOf(id)) {
        await sleep(100);
      }
      expect(row).toMatchObject({ status: 'scheduled', holdReason: 'quiet_hours' });
      expect(row.sendAt!.toISOString()).toBe(nextOpening('UTC', window, new Date()).toISOString());
      const jobs = await db.execute<{ start_after: Date }>(
        sql`select start_after from pgboss.job where name = 'sms.send.later' and (data->>'messageId')::bigint = ${id} and state = 'created'`,
      );
      expect(jobs.map((j) => new Date(j.start_after).toISOString())).toEqual([row.sendAt!.toISOString()]);
      await sleep(1_000);
      expect(atFake(body)).toHaveLength(0);
    } finally {
      await worker.stop();
    }
  });
});
