import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db } from '@/server/db/client';
import { followBusiness } from '@/server/testing/business-events';
import { EVENTS_CHANNEL, publish } from '@/server/services/live-events/publish';
import { streamMeter } from './stream-meter';

/**
 * The LISTEN fan-out: events reach the streams of their own business only, and when the LISTEN
 * connection is lost and comes back (PostgreSQL restarted, the backend killed) every stream open
 * across the gap is interrupted, so its client reconnects and refetches what it missed. Every
 * subscriber is admitted by the stream meter. (What a stream does with the events: event-stream.test.ts.)
 */
async function listenBackends() {
  return db.execute<{ pid: number }>(
    sql`select pid from pg_stat_activity where datname = current_database() and query ilike ${`listen%${EVENTS_CHANNEL}%`} and pid <> pg_backend_pid()`,
  );
}

describe('LISTEN fan-out', () => {
  it('delivers an event to the subscribers of its business only, each admitted by the stream meter', async () => {
    const mine = followBusiness(901, 901);
    const other = followBusiness(902, 902);
    expect(streamMeter().count({ sessionId: 901 })).toBe(1);
    await mine.ready;
    await publish({ type: 'conversation.updated', businessId: 901, conversationIds: [7] }, db);
    expect(await mine.next()).toEqual({ type: 'conversation.updated', businessId: 901, conversationIds: [7] });
    await expect(other.next(1500)).rejects.toThrow('no event in time');
    mine.stop();
    other.stop();
    expect(streamMeter().count({ sessionId: 901 })).toBe(0);
  });

  it('splits a long id list into parts under the NOTIFY cap, each id delivered once and in order', async () => {
    const stream = followBusiness(904, 904);
    await stream.ready;
    // Ids of 19 digits (the longest a bigint has) make the largest payloads.
    const messageIds = Array.from({ length: 400 }, (_, i) => 9_000_000_000_000_000_000 + i * 1024);
    const conversationIds = Array.from({ length: 400 }, (_, i) => 1_000_000 + i);
    await publish({ type: 'message.created', businessId: 904, conversationIds, messageIds }, db);
    const parts: { messageIds: number[]; conversationIds: number[] }[] = [];
    while (parts.length < 3) parts.push((await stream.next()) as (typeof parts)[number]);
    expect(parts.map((p) => p.messageIds.length)).toEqual([150, 150, 100]);
    expect(parts.flatMap((p) => p.messageIds)).toEqual(messageIds);
    expect(parts.flatMap((p) => p.conversationIds)).toEqual(conversationIds);
    for (const p of parts)
      expect(Buffer.byteLength(JSON.stringify({ type: 'message.created', businessId: 904, ...p }))).toBeLessThan(8000);
    await expect(stream.next(1000)).rejects.toThrow('no event in time');
    stream.stop();
  });

  it('interrupts every open subscriber when the LISTEN connection comes back after a loss', async () => {
    const stream = followBusiness(903, 903);
    await stream.ready;
    const pending = stream.next(20_000);
    const [backend] = await listenBackends();
    expect(backend).toBeDefined();
    await db.execute(sql`select pg_terminate_backend(${backend!.pid})`);
    await expect(pending).rejects.toThrow('interrupted');
    stream.stop();

    // A new subscriber, on the re-established LISTEN, gets what is published afterwards.
    const fresh = followBusiness(903, 903);
    const got = fresh.next();
    await new Promise((r) => setTimeout(r, 300));
    await publish({ type: 'conversation.updated', businessId: 903, conversationIds: [8] }, db);
    expect(await got).toMatchObject({ businessId: 903, conversationIds: [8] });
    fresh.stop();
  }, 30_000);
});
