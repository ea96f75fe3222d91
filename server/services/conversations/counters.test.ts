import { eq, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db } from '@/server/db/client';
import { conversations, messages } from '@/db/schema';
import { insertMessages } from '@/server/services/messages/insert';
import { touchConversations } from './activity';
import { createClient, createConversation, createSmsNumber, createTenant } from '@/server/testing/factories';
import { api, jsonOf } from '@/server/testing/http';
import { prng } from '@/server/testing/prng';
import { holder, lockWaiters, untilBlockedBy } from '@/server/testing/locks';

/**
 * docs/api.md#counts: `unread_messages_count` (inbound, not read, not a note) and
 * `messages_flagged_count` stay exact under concurrent writes. Inbound messages, read-status
 * changes and flag changes race on one conversation through the real REST handlers; afterwards the
 * stored counters must equal a fresh count over the messages.
 */

const INBOUND = 50;
const READS = 20;
const FLAGS = 30;
const ROUNDS = 3;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function recount(conversationId: number) {
  const [row] = await db.execute<{ unread: number; flagged: number; total: number }>(sql`
    select count(*) filter (where direction = 'inbound' and not is_read and message_type <> 'NOTE')::int as unread,
           count(*) filter (where flagged)::int as flagged,
           count(*)::int as total
    from messages where conversation_id = ${conversationId}`);
  return row!;
}

async function stored(conversationId: number) {
  const [row] = await db.select().from(conversations).where(eq(conversations.id, conversationId));
  return row!;
}

async function runRound(round: number) {
  const t = await createTenant();
  await createSmsNumber(t.business.id);
  const headers = { 'x-api-key': t.apiKey };
  const base = `/api/v1/businesses/${t.business.id}`;
  const client = await createClient(t.business.id);
  const created = await api.post(`${base}/conversations`, { headers, body: { client_id: client.id } });
  const conversationId = (await jsonOf(created)).conversation_id as number;

  // A few messages exist before the race, so reads and flags have targets from the start.
  const seeded = await jsonOf(
    await api.post(`${base}/sms/record`, {
      headers,
      body: {
        sender_type: 'client',
        messages: Array.from({ length: 5 }, (_, i) => ({ client_id: client.id, message: `before ${i}`, direction: 'inbound' })),
      },
    }),
  );
  const pool: number[] = [...seeded.message_ids];
  const random = prng(0xc0ffee + round);
  const pick = (n: number) => Array.from({ length: n }, () => pool[Math.floor(random() * pool.length)]!);
  const statuses: { kind: string; status: number }[] = [];
  let readUpdated = 0;
  let flagsSet = 0;

  const tasks: (() => Promise<void>)[] = [];
  for (let i = 0; i < INBOUND; i++) {
    tasks.push(async () => {
      const res = await api.post(`${base}/sms/record`, {
        headers,
        body: {
          sender_type: 'client',
          messages: [{ client_id: client.id, message: `round ${round} inbound ${i}`, direction: 'inbound' }],
        },
      });
      statuses.push({ kind: 'inbound', status: res.status });
      if (res.status === 200) pool.push(...(await jsonOf(res)).message_ids);
    });
  }
  for (let i = 0; i < READS; i++) {
    tasks.push(async () => {
      await sleep(random() * 400);
      // Spread over the inbound stream, so targets include messages recorded during the race.
      // Mostly marking read; every fifth call puts some back to unread, so both directions race.
      const res = await api.post(`${base}/messages/read`, {
        headers,
        body: { message_ids: [...new Set(pick(1 + Math.floor(random() * 6)))], is_read: i % 5 !== 4 },
      });
      statuses.push({ kind: 'read', status: res.status });
      if (res.status === 200) readUpdated += (await jsonOf(res)).updated;
    });
  }
  for (let i = 0; i < FLAGS; i++) {
    tasks.push(async () => {
      await sleep(random() * 400);
      // The first eight all hit one message (flag/unflag races on one row); the rest spread out.
      const [target] = i < 8 ? [pool[0]!] : pick(1);
      const flagged = random() < 0.6;
      const res = await api.post(`${base}/messages/${target}/flag`, { headers, body: { flagged } });
      statuses.push({ kind: 'flag', status: res.status });
      if (res.status === 200 && flagged) flagsSet++;
    });
  }
  // Shuffle so the kinds interleave.
  for (let i = tasks.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [tasks[i], tasks[j]] = [tasks[j]!, tasks[i]!];
  }
  const started = performance.now();
  await Promise.all(tasks.map((task) => task()));
  const ms = Math.round(performance.now() - started);

  expect(statuses).toHaveLength(INBOUND + READS + FLAGS);
  expect(
    statuses.filter((s) => s.status !== 200),
    'every call succeeds (no deadlock)',
  ).toEqual([]);
  const fresh = await recount(conversationId);
  const row = await stored(conversationId);
  expect(fresh.total).toBe(5 + INBOUND);
  expect({ unread: row.unreadCount, flagged: row.flaggedCount }, `round ${round}`).toEqual({
    unread: fresh.unread,
    flagged: fresh.flagged,
  });
  // The API answers the same numbers.
  const details = await jsonOf(await api.get(`${base}/clients/${client.id}`, { headers }));
  expect(details).toMatchObject({ unread_messages_count: fresh.unread, messages_flagged_count: fresh.flagged });
  // The scenario really moved both counters (not a trivial 0 = 0).
  expect(readUpdated).toBeGreaterThan(0);
  expect(flagsSet).toBeGreaterThan(0);
  return { ms, ...fresh };
}

/** An unread inbound SMS from the conversation's client, as a row to insert. */
const unreadInboundSms = (
  conv: { id: number; businessId: number; clientId: number },
  content: string,
): typeof messages.$inferInsert => ({
  businessId: conv.businessId,
  conversationId: conv.id,
  clientId: conv.clientId,
  origin: 'webhook',
  channel: 'sms',
  direction: 'inbound',
  messageType: 'TEXT',
  senderType: 'client',
  content,
  status: 'received',
  isRead: false,
});

describe('read-status calls racing each other', () => {
  // Runs first in this file: it relies on the three messages' physical order in a fresh table.
  //
  it('two overlapping read-status calls both succeed (no deadlock)', async () => {
    const t = await createTenant();
    const headers = { 'x-api-key': t.apiKey };
    const base = `/api/v1/businesses/${t.business.id}`;
    const client = await createClient(t.business.id);
    const conv = await createConversation(t.business.id, client.id);
    const inbound = (content: string) => unreadInboundSms(conv, content);
    const [x, z, y] = await db.transaction((tx) => insertMessages([inbound('x'), inbound('z'), inbound('y')], tx));
    await db.update(conversations).set({ unreadCount: 3 }).where(eq(conversations.id, conv.id));
    // Statistics as autovacuum would gather them: a small table is read by a sequential scan.
    await db.execute(sql`analyze messages`);

    // A writer in flight on x (a new row version of x, placed after y) and one holding z.
    const onX = holder(sql`update messages set flagged = flagged where id = ${x!.id}`);
    const onZ = holder(sql`select id from messages where id = ${z!.id} for update`);
    const zPid = await onZ.pid;
    const xPid = await onX.pid;

    // Call 1 (x, z, y) starts before x's new version commits: it waits on x.
    const first = api.post(`${base}/messages/read`, { headers, body: { message_ids: [x!.id, z!.id, y!.id] } });
    await untilBlockedBy('call 1 waits on x', '%set is_read%', xPid);
    onX.release();
    await onX.done;
    // Call 1 now holds x and waits on z.
    await untilBlockedBy('call 1 waits on z', '%set is_read%', zPid);
    const callOne = (await lockWaiters('%set is_read%')).find((w) => w.blockers.includes(zPid))!.pid;
    // Call 2 (x, y) sees x's new version after y: it locks y and waits on x (held by call 1).
    const second = api.post(`${base}/messages/read`, { headers, body: { message_ids: [x!.id, y!.id] } });
    await untilBlockedBy('call 2 waits on call 1', '%set is_read%', callOne);
    // z is released: call 1 goes on to y, held by call 2.
    onZ.release();
    await onZ.done;

    const [r1, r2] = await Promise.all([first, second]);
    const bodies = [await r1.json(), await r2.json()];
    // Whatever happened, the count is exact.
    expect((await stored(conv.id)).unreadCount).toBe((await recount(conv.id)).unread);
    expect([r1.status, r2.status], JSON.stringify(bodies)).toEqual([200, 200]);
    expect((await recount(conv.id)).unread).toBe(0);
  }, 30_000);
});

describe('counts under concurrent writes (docs/api.md#counts)', () => {
  for (let round = 1; round <= ROUNDS; round++) {
    it(`round ${round}: ${INBOUND} inbound records, ${READS} read-status calls and ${FLAGS} flag/unflag calls at once leave exact counters`, async () => {
      const result = await runRound(round);
      expect(result.total).toBe(5 + INBOUND);
      console.log(
        `counts round ${round}: ${result.ms} ms for ${INBOUND + READS + FLAGS} concurrent calls; unread ${result.unread}, flagged ${result.flagged}`,
      );
    }, 60_000);
  }
});

/**
 * Two writers touching one conversation with a deterministic interleaving: writer B inserts the
 * newer message and updates the conversation (holding its row lock); writer A, whose message is
 * older, inserts and starts its update, which waits for B's lock; then B commits and A finishes.
 * This is what two concurrent record requests / webhooks do.
 */
async function interleavedWriters() {
  const t = await createTenant();
  const client = await createClient(t.business.id);
  const conv = await createConversation(t.business.id, client.id, { lastActivityAt: new Date(Date.now() - 3_600_000) });
  const row = (content: string, sentAt: Date): typeof messages.$inferInsert => ({ ...unreadInboundSms(conv, content), sentAt });
  const now = Date.now();
  let releaseB!: () => void;
  const bMayCommit = new Promise<void>((r) => (releaseB = r));
  let bTouched!: () => void;
  const bHasLock = new Promise<void>((r) => (bTouched = r));

  const writerB = db.transaction(async (tx) => {
    const [m] = await insertMessages([row('newer (B)', new Date(now))], tx);
    await touchConversations([m!], tx);
    bTouched();
    await bMayCommit;
    return m!.id;
  });
  await bHasLock;
  const writerA = db.transaction(async (tx) => {
    const [m] = await insertMessages([row('older (A)', new Date(now - 1000))], tx);
    await touchConversations([m!], tx);
    return m!.id;
  });
  // Wait until A is blocked on B's conversation lock.
  for (let i = 0; ; i++) {
    const [w] = await db.execute<{ n: number }>(sql`
      select count(*)::int as n from pg_stat_activity
      where datname = current_database() and wait_event_type = 'Lock' and query ilike '%conversations c%'`);
    if (w!.n > 0) break;
    if (i > 200) throw new Error('writer A never waited for the lock');
    await sleep(10);
  }
  releaseB();
  const [newerId, olderId] = await Promise.all([writerB, writerA]);
  return { conv, newerId, olderId };
}

describe('conversation summary under interleaved writers', () => {
  it('unread_count counts both messages', async () => {
    const { conv } = await interleavedWriters();
    const row = await stored(conv.id);
    expect(row.unreadCount).toBe(2);
    expect(row.unreadCount).toBe((await recount(conv.id)).unread);
  });

  it('last_message_id and last_message_content are the newest message (sent_at desc, id desc)', async () => {
    const { conv, newerId } = await interleavedWriters();
    const row = await stored(conv.id);
    const [newest] = await db
      .select()
      .from(messages)
      .where(eq(messages.conversationId, conv.id))
      .orderBy(sql`${messages.sentAt} desc, ${messages.id} desc`)
      .limit(1);
    expect(newest!.id).toBe(newerId);
    expect({ id: row.lastMessageId, content: row.lastMessageContent }).toEqual({ id: newerId, content: 'newer (B)' });
  });
});
