import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db } from '@/db/client';
import { businessEvents, EventsInterrupted } from './listen';
import { EVENTS_CHANNEL, publish } from './publish';

/**
 * The LISTEN fan-out: events reach the streams of their own business only, and when the LISTEN
 * connection is lost and comes back (PostgreSQL restarted, the backend killed) every stream open
 * across the gap is interrupted, so its client reconnects and refetches what it missed.
 */
const next = <T>(it: AsyncIterator<T>, ms = 10_000) =>
  Promise.race([it.next(), new Promise<never>((_, reject) => setTimeout(() => reject(new Error('no event in time')), ms))]);

async function listenBackends() {
  return db.execute<{ pid: number }>(
    sql`select pid from pg_stat_activity where datname = current_database() and query ilike ${`listen%${EVENTS_CHANNEL}%`} and pid <> pg_backend_pid()`,
  );
}

describe('LISTEN fan-out', () => {
  it('delivers an event to the streams of its business only', async () => {
    const done = new AbortController(); // ends the streams (a pending next() blocks return())
    const mine = businessEvents({ businessId: 901, sessionId: 901 }, done.signal)[Symbol.asyncIterator]();
    const other = businessEvents({ businessId: 902, sessionId: 902 }, done.signal)[Symbol.asyncIterator]();
    const first = next(mine);
    const foreign = next(other, 1500);
    // Subscribed once the hub is listening: publish after the first turn of the generators.
    await new Promise((r) => setTimeout(r, 300));
    await publish(db, { type: 'conversation.updated', businessId: 901, conversationIds: [7] });
    expect((await first).value).toEqual({ type: 'conversation.updated', businessId: 901, conversationIds: [7] });
    await expect(foreign).rejects.toThrow('no event in time');
    done.abort();
  });

  it('splits a long id list into parts under the NOTIFY cap, each id delivered once and in order', async () => {
    const done = new AbortController();
    const stream = businessEvents({ businessId: 904, sessionId: 904 }, done.signal)[Symbol.asyncIterator]();
    const first = next(stream);
    await new Promise((r) => setTimeout(r, 300));
    // Ids of 19 digits (the longest a bigint has) make the largest payloads.
    const messageIds = Array.from({ length: 400 }, (_, i) => 9_000_000_000_000_000_000 + i * 1024);
    const conversationIds = Array.from({ length: 400 }, (_, i) => 1_000_000 + i);
    await publish(db, { type: 'message.created', businessId: 904, conversationIds, messageIds });
    const parts = [(await first).value as { messageIds: number[]; conversationIds: number[] }];
    while (parts.length < 3) parts.push((await next(stream)).value as (typeof parts)[number]);
    expect(parts.map((p) => p.messageIds.length)).toEqual([150, 150, 100]);
    expect(parts.flatMap((p) => p.messageIds)).toEqual(messageIds);
    expect(parts.flatMap((p) => p.conversationIds)).toEqual(conversationIds);
    for (const p of parts)
      expect(Buffer.byteLength(JSON.stringify({ type: 'message.created', businessId: 904, ...p }))).toBeLessThan(8000);
    await expect(next(stream, 1000)).rejects.toThrow('no event in time');
    done.abort();
  });

  it('interrupts every open stream when the LISTEN connection comes back after a loss', async () => {
    const stream = businessEvents({ businessId: 903, sessionId: 903 })[Symbol.asyncIterator]();
    const pending = next(stream, 20_000);
    await new Promise((r) => setTimeout(r, 300));
    const [backend] = await listenBackends();
    expect(backend).toBeDefined();
    await db.execute(sql`select pg_terminate_backend(${backend!.pid})`);
    await expect(pending).rejects.toBeInstanceOf(EventsInterrupted);

    // A new stream, on the re-established LISTEN, gets what is published afterwards.
    const done = new AbortController();
    const fresh = businessEvents({ businessId: 903, sessionId: 903 }, done.signal)[Symbol.asyncIterator]();
    const got = next(fresh);
    await new Promise((r) => setTimeout(r, 300));
    await publish(db, { type: 'conversation.updated', businessId: 903, conversationIds: [8] });
    expect((await got).value).toMatchObject({ businessId: 903, conversationIds: [8] });
    done.abort();
  }, 30_000);
});
