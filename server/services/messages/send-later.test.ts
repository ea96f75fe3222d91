import { eq, sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { db } from '@/server/db/client';
import { messages } from '@/db/schema';
import { createClient, createSmsNumber } from '@/server/testing/factories';
import { getJson, locs, postJson, restTenant, type RestTenant } from '@/server/testing/http';
import { messageOf } from '@/server/testing/messages';
import { inboundSmsForm, postTwilio, TWILIO_PATHS } from '@/server/testing/webhooks';
import { CANCELED, cancelScheduledWith, claimForSendingCtes } from './lifecycle';

/**
 * Send later (docs/api.md#send-later) through the REST endpoints and the lifecycle: stored
 * `scheduled` with a job started after send_at, canceled, rescheduled, canceled by the client's
 * reply, and claimed exactly once however a cancel races the claim. The sends themselves are in
 * workers/send-later.test.ts.
 */

let t: RestTenant;
let smsNumber: string;
beforeAll(async () => {
  t = await restTenant();
  smsNumber = (await createSmsNumber(t.business.id)).phoneNumber;
});

const inMinutes = (m: number) => new Date(Date.now() + m * 60_000);
let n = 0;
const phone = () => `+1415${String(3_100_000 + n++)}`;

async function schedule(sendAt: Date | string, extra: Record<string, unknown> = {}, to = phone()) {
  return postJson(`${t.base}/sms`, t.key, {
    sender_type: 'staff',
    send_at: typeof sendAt === 'string' ? sendAt : sendAt.toISOString(),
    messages: [{ to_number: to, message: `Reminder ${n}` }],
    ...extra,
  });
}

async function jobsOf(messageId: number) {
  return db.execute<{ state: string; start_after: Date }>(
    sql`select state::text as state, start_after from pgboss.job where name = 'sms.send.later' and (data->>'messageId')::bigint = ${messageId} order by created_on`,
  );
}

/** Runs the worker's claim for one message; true when it was claimed for sending now. */
async function claim(messageId: number): Promise<boolean> {
  const rows = await db.execute<{ id: number; stuck_since: Date | null }>(
    sql`with ${claimForSendingCtes([{ id: messageId, attempts: null }])} select id, stuck_since from attempt`,
  );
  return rows.some((r) => r.stuck_since === null);
}

describe('send later over REST', () => {
  it('stores the messages scheduled, with a send job started after send_at, in the same transaction', async () => {
    const sendAt = inMinutes(90);
    const res = await schedule(sendAt);
    expect(res.status).toBe(200);
    expect(res.body.message).toMatch(/scheduled for/);
    const [id] = res.body.message_ids as number[];
    const row = await messageOf(id!);
    expect(row).toMatchObject({ status: 'scheduled', cancelOnReply: true, attempts: 1 });
    expect(row.sendAt?.toISOString()).toBe(sendAt.toISOString());
    const jobs = await jobsOf(id!);
    expect(jobs).toHaveLength(1);
    expect(new Date(jobs[0]!.start_after).toISOString()).toBe(sendAt.toISOString());
  });

  it('refuses a send_at in the past, more than a year ahead, or on a re-queue (422 with the field)', async () => {
    const past = await schedule(inMinutes(-1));
    expect(past.status).toBe(422);
    expect(locs(past.body)).toEqual([['body', 'send_at']]);
    const far = await schedule(inMinutes(60 * 24 * 400));
    expect(far.status).toBe(422);
    expect(locs(far.body)).toEqual([['body', 'send_at']]);
    const notADate = await schedule('2026-02-30T09:00:00Z');
    expect(notADate.status).toBe(422);
    const requeue = await postJson(`${t.base}/sms`, t.key, {
      sender_type: 'staff',
      send_at: inMinutes(10).toISOString(),
      messages: [{ message_id: 1 }],
    });
    expect(requeue.status).toBe(422);
    expect(locs(requeue.body)).toContainEqual(['body', 'messages', 0, 'message_id']);
  });

  it('cancels a scheduled message once (409 after), and never another business’s (404)', async () => {
    const [id] = (await schedule(inMinutes(30))).body.message_ids as number[];
    const other = await restTenant();
    const foreign = await postJson(`${other.base}/messages/${id}/cancel`, other.key, {});
    expect(foreign.status).toBe(404);

    const res = await postJson(`${t.base}/messages/${id}/cancel`, t.key, {});
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      message_status: 'canceled',
      error_code: 'canceled',
      error_message: 'Canceled before it was sent',
    });
    const again = await postJson(`${t.base}/messages/${id}/cancel`, t.key, {});
    expect(again.status).toBe(409);
    // Its job, when it runs, finds nothing to claim.
    expect(await claim(id!)).toBe(false);
  });

  it('reschedules: a new job after the new send_at; the earlier job claims nothing while it is still to come', async () => {
    const [id] = (await schedule(inMinutes(5))).body.message_ids as number[];
    const later = inMinutes(120);
    const res = await postJson(`${t.base}/messages/${id}/reschedule`, t.key, { send_at: later.toISOString() });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ message_status: 'scheduled', send_at: later.toISOString() });
    const jobs = await jobsOf(id!);
    expect(jobs.map((j) => new Date(j.start_after).toISOString())).toContain(later.toISOString());
    expect(jobs).toHaveLength(2);
    // The first job's time has come (as if): send_at is still ahead, so its claim takes nothing.
    expect(await claim(id!)).toBe(false);
    expect((await messageOf(id!)).status).toBe('scheduled');

    const past = await postJson(`${t.base}/messages/${id}/reschedule`, t.key, { send_at: inMinutes(-5).toISOString() });
    expect(past.status).toBe(422);
    expect(locs(past.body)).toEqual([['body', 'send_at']]);
    await postJson(`${t.base}/messages/${id}/cancel`, t.key, {});
    const gone = await postJson(`${t.base}/messages/${id}/reschedule`, t.key, { send_at: later.toISOString() });
    expect(gone.status).toBe(409);
  });

  it('the conversation list previews a scheduled text while it waits, and what came before it once it is canceled', async () => {
    const to = phone();
    const inbound = await postJson(`${t.base}/sms/record`, t.key, {
      sender_type: 'client',
      messages: [{ to_number: to, message: 'Is Saturday free?', direction: 'inbound' }],
    });
    const [inboundId] = inbound.body.message_ids as number[];
    const scheduled = await schedule(inMinutes(30), {}, to);
    const [id] = scheduled.body.message_ids as number[];
    const conversationId = (await messageOf(id!)).conversationId;
    const listed = async () => {
      const res = await getJson(`${t.base}/conversations?page_size=100`, t.key);
      return (
        res.body.conversations as {
          conversation_id: number;
          last_message_id: number;
          last_message_content: string;
          last_updated_at: string;
        }[]
      ).find((c) => c.conversation_id === conversationId)!;
    };
    const waiting = await listed();
    expect(waiting).toMatchObject({ last_message_id: id, last_message_content: (await messageOf(id!)).content });

    expect((await postJson(`${t.base}/messages/${id}/cancel`, t.key, {})).status).toBe(200);
    const canceled = await listed();
    // It never reached the client: the list shows what did; the activity it was stays.
    expect(canceled).toMatchObject({ last_message_id: inboundId, last_message_content: 'Is Saturday free?' });
    expect(canceled.last_updated_at).toBe(waiting.last_updated_at);
  });

  it('cancel on reply: the client’s text cancels the conversation’s scheduled messages that ask for it', async () => {
    const client = await createClient(t.business.id, { phoneNumber: phone() });
    const body = (cancelOnReply?: boolean) => ({
      sender_type: 'staff',
      send_at: inMinutes(60).toISOString(),
      ...(cancelOnReply === undefined ? {} : { cancel_on_reply: cancelOnReply }),
      messages: [{ client_id: client.id, message: 'See you tomorrow at 10' }],
    });
    const [byDefault] = (await postJson(`${t.base}/sms`, t.key, body())).body.message_ids as number[];
    const [keep] = (await postJson(`${t.base}/sms`, t.key, body(false))).body.message_ids as number[];

    const res = await postTwilio(TWILIO_PATHS.smsIncoming, inboundSmsForm(smsNumber, client.phoneNumber!, 'Can we make it 11?'));
    expect(res.status).toBe(200);
    expect(await messageOf(byDefault!)).toMatchObject({
      status: 'canceled',
      errorCode: 'client_replied',
      errorMessage: 'Canceled: the client replied first',
    });
    expect((await messageOf(keep!)).status).toBe('scheduled');
  });
});

describe('the claim of a scheduled message', () => {
  it('takes it only once send_at has passed, sets sent_at to when it went, and only once', async () => {
    const [id] = (await schedule(inMinutes(1))).body.message_ids as number[];
    expect(await claim(id!)).toBe(false);
    await db.execute(sql`update messages set send_at = now() - interval '5 seconds' where id = ${id}`);
    expect(await claim(id!)).toBe(true);
    const row = await messageOf(id!);
    expect(row.status).toBe('sending');
    expect(row.sentAt.getTime() - row.sendAt!.getTime()).toBeGreaterThanOrEqual(4_000);
    expect(await claim(id!)).toBe(false);
  });

  it('a cancel racing the claim: exactly one of them wins, every time', async () => {
    const outcomes = { sent: 0, canceled: 0 };
    for (let i = 0; i < 20; i++) {
      const [id] = (await schedule(inMinutes(1))).body.message_ids as number[];
      await db.execute(sql`update messages set send_at = now() where id = ${id}`);
      const [claimed, canceled] = await Promise.all([
        claim(id!),
        db.transaction(async (tx) => (await cancelScheduledWith(t.business.id, [id!], CANCELED.byRequest, tx)).length === 1),
      ]);
      expect(claimed !== canceled).toBe(true);
      const [row] = await db.select({ status: messages.status }).from(messages).where(eq(messages.id, id!));
      expect(row!.status).toBe(claimed ? 'sending' : 'canceled');
      outcomes[claimed ? 'sent' : 'canceled']++;
    }
    expect(outcomes.sent + outcomes.canceled).toBe(20);
  });
});
