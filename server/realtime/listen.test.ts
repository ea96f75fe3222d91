import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db } from '@/db/client';
import { businessEvents, EventsInterrupted, StreamEnded, TOO_FAR_BEHIND } from './listen';
import { EVENTS_CHANNEL, publish, type InboxEvent } from './publish';
import { streamMeter } from './stream-meter';

/**
 * The LISTEN fan-out: events reach the streams of their own business only, and when the LISTEN
 * connection is lost and comes back (PostgreSQL restarted, the backend killed) every stream open
 * across the gap is interrupted, so its client reconnects and refetches what it missed. Every stream
 * is admitted by the stream meter, and one whose reader falls more than 256 KiB behind is ended.
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

  it('holds up to 256 KiB of events a reader has not taken; one more ends the stream as too far behind', async () => {
    // Events of one size: 150 ids (the most one NOTIFY carries) of 16 digits each.
    const big = (k: number): InboxEvent => ({
      type: 'conversation.updated',
      businessId: 905,
      conversationIds: Array.from({ length: 150 }, (_, i) => 1_000_000_000_000_000 + k * 1000 + i),
    });
    const frameBytes = Buffer.byteLength(`data: ${JSON.stringify({ json: big(0) })}\n\n\n`);
    const fit = Math.floor((256 * 1024) / frameBytes);
    const done = new AbortController();
    const stream = businessEvents({ businessId: 905, sessionId: 905 }, done.signal)[Symbol.asyncIterator]();
    const first = next(stream);
    await new Promise((r) => setTimeout(r, 300));
    expect(streamMeter().count({ sessionId: 905 })).toBe(1);
    await publish(db, big(0));
    await first;
    // The reader takes nothing while `fit` events arrive: all are kept, and come out in order.
    await db.transaction(async (tx) => {
      for (let k = 1; k <= fit; k++) await publish(tx, big(k));
    });
    await new Promise((r) => setTimeout(r, 500));
    for (let k = 1; k <= fit; k++) expect((await next(stream)).value).toEqual(big(k));
    // Again, with one more than fits: the stream ends, with nothing of what it held.
    await db.transaction(async (tx) => {
      for (let k = 1; k <= fit + 1; k++) await publish(tx, big(k));
    });
    await new Promise((r) => setTimeout(r, 500));
    const ended = await next(stream).then(
      () => null,
      (err: unknown) => err,
    );
    expect(ended).toBeInstanceOf(StreamEnded);
    expect(ended).toMatchObject({ code: 'SERVICE_UNAVAILABLE', message: TOO_FAR_BEHIND });
    expect(streamMeter().count({ sessionId: 905 })).toBe(0);
    done.abort();
  });
});
