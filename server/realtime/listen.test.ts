import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { createSql } from '@/db/connect';
import { closeDb, db, rawSql } from '@/server/db/client';
import { followBusiness, type FollowedBusiness, type Received } from '@/server/testing/business-events';
import { logWakeUps } from '@/server/testing/log-events';
import { APPENDED_CHANNEL, POLL_MS } from './listen';
import { streamMeter } from './stream-meter';

/**
 * The log's tail (listen.ts): frames reach the streams of their own business only, each once, in
 * the log's (tx_id, id) order whatever order transactions took their ids or committed in; a stream
 * that resumes after an event gets everything after it once, however its replay and the live
 * frames meet; the loss of the LISTEN connection loses nothing. (What a stream does with the
 * frames, and the refetch past the bounds: event-stream.test.ts.)
 */
async function take(stream: FollowedBusiness, n: number, ms = 10_000): Promise<Received[]> {
  const got: Received[] = [];
  while (got.length < n) got.push(await stream.next(ms));
  return got;
}

/** A business id of its own per test: the log is shared, the tail reads every business's events. */
let nextBusiness = 900_000 + Math.floor(Math.random() * 50_000) * 10;
const businessId = () => ++nextBusiness;

describe('the event log tail', () => {
  it('delivers an event to the streams of its business only, with its id, each admitted by the stream meter', async () => {
    const b = businessId();
    const mine = followBusiness(b, b);
    const other = followBusiness(b + 1_000_000, b + 1_000_000);
    expect(streamMeter().count({ sessionId: b })).toBe(1);
    expect(await mine.joined).toBe(true);
    const [id] = await logWakeUps(b, [7]);
    expect(await mine.next()).toEqual({ type: 'conversation.updated', businessId: b, conversationIds: [7], eventId: id });
    await expect(other.next(1500)).rejects.toThrow('no event in time');
    mine.stop();
    other.stop();
    expect(streamMeter().count({ sessionId: b })).toBe(0);
  });

  it('a stream that resumes while events keep coming gets each one after its last once, in order', async () => {
    const b = businessId();
    const [first] = await logWakeUps(b, [1]);
    // Appended without pause, in small transactions, before, while and after the stream joins.
    let stop = false;
    const appended: number[] = [];
    const writer = (async () => {
      for (let i = 2; !stop || appended.length < 40; i++) appended.push(...(await logWakeUps(b, [i, i])));
    })();
    await new Promise((r) => setTimeout(r, 50));
    const stream = followBusiness(b, b, first!);
    await new Promise((r) => setTimeout(r, 200));
    stop = true;
    await writer;
    const got = await take(stream, appended.length);
    expect(got.map((e) => e.eventId)).toEqual(appended);
    await expect(stream.next(1000)).rejects.toThrow('no event in time');
    stream.stop();
  });

  it('keeps the log’s order across concurrent transactions: a later commit with a lower id is neither skipped nor doubled', async () => {
    const b = businessId();
    const stream = followBusiness(b, b);
    await stream.joined;
    const early = rawSql().reserve();
    const late = rawSql().reserve();
    const [e, l] = await Promise.all([early, late]);
    try {
      // `early` takes its transaction id first; `late` then appends (the lower event id) and commits
      // first; `early` appends after and commits last.
      await e`begin`;
      await e`select pg_current_xact_id()`;
      await l`begin`;
      const [lower] = await l`insert into events (business_id, type, conversation_id, actor_type, data)
        values (${b}, 'conversation.woke', 1, 'system', '{"conversation_id":1}') returning id`;
      await l`commit`;
      // Committed, but below no bound yet: `early` still runs.
      await expect(stream.next(500)).rejects.toThrow('no event in time');
      const [higher] = await e`insert into events (business_id, type, conversation_id, actor_type, data)
        values (${b}, 'conversation.woke', 2, 'system', '{"conversation_id":2}') returning id`;
      await e`commit`;
      const got = await take(stream, 2);
      // (tx_id, id) order: early's transaction first, though its id is the higher.
      expect(got.map((g) => g.eventId)).toEqual([Number(higher!.id), Number(lower!.id)]);
      // Resuming after the first, the second is replayed; after the second, nothing.
      const after = followBusiness(b, b + 1, Number(higher!.id));
      expect((await after.next()).eventId).toBe(Number(lower!.id));
      const none = followBusiness(b, b + 2, Number(lower!.id));
      await expect(none.next(1000)).rejects.toThrow('no event in time');
      after.stop();
      none.stop();
    } finally {
      e.release();
      l.release();
      stream.stop();
    }
  });

  it('an event held back by an older transaction that appends nothing arrives once that one ends', async () => {
    const b = businessId();
    const stream = followBusiness(b, b);
    await stream.joined;
    const older = await rawSql().reserve();
    try {
      await older`begin`;
      await older`select pg_current_xact_id()`;
      const [id] = await logWakeUps(b, [3]); // its wake-up comes while `older` holds the bound
      await new Promise((r) => setTimeout(r, 300));
      await older`commit`; // no wake-up: it appended nothing
      const at = Date.now();
      expect((await stream.next(3000)).eventId).toBe(id);
      expect(Date.now() - at).toBeLessThan(2000);
    } finally {
      older.release();
      stream.stop();
    }
  });

  it('loses nothing when the LISTEN connection is lost: the streams stay open and read on from the cursor', async () => {
    const b = businessId();
    const stream = followBusiness(b, b);
    await stream.joined;
    const [backend] = await db.execute<{ pid: number }>(
      // This file's own: test files run side by side, each on a database of its own, on one server.
      sql`select pid from pg_stat_activity
          where query ilike ${`listen%${APPENDED_CHANNEL}%`} and datname = current_database() and pid <> pg_backend_pid()`,
    );
    expect(backend).toBeDefined();
    await db.execute(sql`select pg_terminate_backend(${backend!.pid})`);
    const ids = await logWakeUps(b, [8, 9]); // perhaps while nobody listens
    expect((await take(stream, 2)).map((e) => e.eventId)).toEqual(ids);
    stream.stop();
  }, 30_000);

  it('reads nothing while no stream is open: a process that closed its pool is not connected again', async () => {
    const b = businessId();
    const stream = followBusiness(b, b);
    await stream.joined;
    stream.stop();
    await closeDb(); // as a file's end or a shutdown does, before its database goes
    const observer = createSql(process.env.DATABASE_URL!, { max: 1 });
    try {
      await new Promise((r) => setTimeout(r, POLL_MS + 1_000)); // past the poll that was due
      const [opened] = await observer<{ n: number }[]>`
        select count(*)::int as n from pg_stat_activity
        where datname = current_database() and pid <> pg_backend_pid() and query not ilike 'listen%'`;
      // Before, the tail's poll opened a new pool; a database dropped under it while it fetched its
      // types broke that query, which the driver leaves unhandled (workers/rejections.ts).
      expect(opened!.n).toBe(0);
    } finally {
      await observer.end();
    }
  }, 30_000);
});
