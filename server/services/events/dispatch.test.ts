import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db } from '@/server/db/client';
import { createTenant } from '@/server/testing/factories';
import { dispatchEvents, type EventHandler, type LoggedEvent } from './dispatch';
import { EVENT_HANDLERS } from './handlers';
import { recordEvents, type NewEvent } from './record';

const woke = (businessId: number, conversationId: number): NewEvent => ({
  type: 'conversation.woke',
  businessId,
  conversationId,
  actor: { type: 'system' },
  data: { conversation_id: conversationId },
});

/** A handler that keeps what it is given of one business (the file's other tests write to the log too). */
function collector(businessId: number, types: EventHandler['types'] = ['conversation.woke']) {
  const seen: LoggedEvent[] = [];
  const handler: EventHandler = {
    name: `collector-${businessId}`,
    types,
    handle: async (events) => void seen.push(...events.filter((e) => e.businessId === businessId)),
  };
  return { handler, seen };
}

/** Dispatches until the handler is caught up. */
async function drain(handler: EventHandler, batch = 500): Promise<void> {
  while ((await dispatchEvents(handler, batch)) > 0);
}

/**
 * Dispatches until the collector holds `expected` events. The bound is the oldest transaction
 * running in the whole PostgreSQL cluster, other test files' included: one of theirs may hold the
 * handler back a moment.
 */
async function drainUntil(handler: EventHandler, seen: LoggedEvent[], expected: number, batch = 500): Promise<void> {
  for (const deadline = Date.now() + 10_000; seen.length < expected && Date.now() < deadline;) {
    await drain(handler, batch);
    if (seen.length < expected) await new Promise((r) => setTimeout(r, 20));
  }
}

describe('event handlers read the log (dispatchEvents)', () => {
  it('each event once, in order, in batches; other types read past; a handler that throws keeps its cursor', async () => {
    const t = await createTenant();
    const { handler, seen } = collector(t.business.id);
    const ids = await recordEvents(Array.from({ length: 7 }, (_, i) => woke(t.business.id, i + 1)));
    await recordEvents([
      {
        type: 'conversation.labeled',
        businessId: t.business.id,
        conversationId: 1,
        actor: { type: 'api' },
        data: { conversation_id: 1, label: 'x', previous_label: null },
      },
    ]);
    await drainUntil(handler, seen, 7, 3);
    expect(seen.map((e) => e.id)).toEqual(ids);
    expect(seen[0]).toMatchObject({ type: 'conversation.woke', businessId: t.business.id, actor: { type: 'system' } });

    const failing: EventHandler = {
      name: handler.name,
      types: handler.types,
      handle: async () => {
        throw new Error('receiver down');
      },
    };
    const [again] = await recordEvents([woke(t.business.id, 8)]);
    // Once the event is readable, the handler's failure rolls its batch back, cursor included.
    let failed = false;
    for (const deadline = Date.now() + 10_000; !failed && Date.now() < deadline;) {
      failed = await dispatchEvents(failing).then(
        () => false,
        (err: Error) => err.message === 'receiver down',
      );
      if (!failed) await new Promise((r) => setTimeout(r, 20));
    }
    expect(failed).toBe(true);
    await drainUntil(handler, seen, 8);
    expect(seen.map((e) => e.id)).toEqual([...ids, again]);
  });

  it('never skips an event whose transaction commits after a later id’s: it waits for it, then hands it over', async () => {
    const t = await createTenant();
    const { handler, seen } = collector(t.business.id);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let taken!: () => void;
    const idTaken = new Promise<void>((r) => (taken = r));
    // The slow transaction takes its id first and commits last.
    const slow = db.transaction(async (tx) => {
      const [id] = await recordEvents([woke(t.business.id, 1)], tx);
      taken();
      await held;
      return id!;
    });
    await idTaken;
    const [fast] = await recordEvents([woke(t.business.id, 2)]);
    // The slow one is still running: nothing at or above its tx_id is read yet, so neither is.
    await drain(handler);
    expect(seen).toEqual([]);
    release();
    const slowId = await slow;
    expect(slowId).toBeLessThan(fast!);
    await drainUntil(handler, seen, 2);
    expect(seen.map((e) => e.id).sort((a, b) => a - b)).toEqual([slowId, fast]);
    const [cursor] = await db.execute<{ event_id: number }>(
      sql`select event_id from event_handler_cursors where handler = ${handler.name}`,
    );
    expect([slowId, fast]).toContain(cursor!.event_id);
  });
});

describe('across transaction ids of different lengths', () => {
  it('orders by the number, not its digits: a batch cut between 999 and 1000 skips nothing and repeats nothing', async () => {
    const t = await createTenant();
    const { handler, seen } = collector(t.business.id);
    // A power of ten every transaction of this window is below (burned up to when the database is young).
    const current = async () => BigInt((await db.execute<{ x: string }>(sql`select pg_current_xact_id()::text as x`))[0]!.x);
    while ((await current()) < 1_100n);
    let boundary = 1_000n;
    while (boundary * 10n + 100n < (await current())) boundary *= 10n;
    // 20 events on each side of the boundary, one transaction id each, written as their transactions would have.
    const txIds = Array.from({ length: 40 }, (_, i) => boundary - 20n + BigInt(i));
    const ids: number[] = [];
    for (const txId of txIds) {
      const [id] = await recordEvents([woke(t.business.id, ids.length + 1)]);
      await db.execute(sql`update events set tx_id = ${String(txId)}::xid8 where id = ${id!}`);
      ids.push(id!);
    }
    await db.execute(
      sql`insert into event_handler_cursors (handler, tx_id) values (${handler.name}, ${String(boundary - 21n)}::xid8)`,
    );
    await drainUntil(handler, seen, ids.length, 7);
    expect(seen.map((e) => e.id)).toEqual(ids);
  });
});

describe('under concurrent writers and dispatchers', () => {
  it('every event exactly once, whatever order transactions take ids and commit in', async () => {
    const t = await createTenant();
    const { handler, seen } = collector(t.business.id);
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    const written: number[] = [];
    let writing = true;
    // Writers: transactions that take their xid early or late, write one to five events, and
    // commit after a random pause; some roll back.
    const writer = async (w: number) => {
      for (let i = 0; i < 25; i++) {
        const n = 1 + ((w * 7 + i) % 5);
        const rollBack = (w + i) % 9 === 0;
        await db
          .transaction(async (tx) => {
            if (i % 2) await tx.execute(sql`select pg_current_xact_id()`);
            await sleep((w * 13 + i * 7) % 15);
            const ids = await recordEvents(
              Array.from({ length: n }, (_, k) => woke(t.business.id, w * 1000 + i * 10 + k + 1)),
              tx,
            );
            await sleep((w * 5 + i * 3) % 10);
            if (rollBack) throw new Error('roll back');
            written.push(...ids);
          })
          .catch((err: Error) => {
            if (err.message !== 'roll back') throw err;
          });
      }
    };
    // Two dispatchers of the same handler, small batches, running all along.
    const dispatcher = async () => {
      while (writing) {
        await dispatchEvents(handler, 7);
        await sleep(1);
      }
    };
    const dispatchers = [dispatcher(), dispatcher()];
    await Promise.all(Array.from({ length: 6 }, (_, w) => writer(w)));
    writing = false;
    await Promise.all(dispatchers);
    await drainUntil(handler, seen, written.length, 7);
    const ids = seen.map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length); // none twice
    expect([...ids].sort((a, b) => a - b)).toEqual([...written].sort((a, b) => a - b)); // none lost, none rolled back
  });

  it('a handler `after` another reads only what that one has passed, and nothing before it has a cursor', async () => {
    const t = await createTenant();
    const first = collector(t.business.id);
    const second = collector(t.business.id);
    const behind: EventHandler = { ...second.handler, name: `behind-${t.business.id}`, after: first.handler.name };
    const ids = await recordEvents([woke(t.business.id, 1), woke(t.business.id, 2)]);
    await drain(behind);
    expect(second.seen).toEqual([]);
    await drainUntil(first.handler, first.seen, 2);
    await drainUntil(behind, second.seen, 2);
    expect(second.seen.map((e) => e.id)).toEqual(ids);
    const [third] = await recordEvents([woke(t.business.id, 3)]);
    await drain(behind);
    expect(second.seen.map((e) => e.id)).toEqual(ids);
    await drainUntil(first.handler, first.seen, 3);
    await drainUntil(behind, second.seen, 3);
    expect(second.seen.map((e) => e.id)).toEqual([...ids, third]);
  });
});

describe('the registry (EVENT_HANDLERS)', () => {
  it('names each handler once, and one that runs `after` another finds it earlier in the list', () => {
    const names = EVENT_HANDLERS.map((h) => h.name);
    expect(new Set(names).size).toBe(names.length);
    // Each dispatch round gives the handlers the log in list order: the one followed has just read.
    for (const [i, handler] of EVENT_HANDLERS.entries()) {
      if (handler.after) expect(names.slice(0, i), handler.name).toContain(handler.after);
    }
    expect(EVENT_HANDLERS.filter((h) => h.after).map((h) => h.name)).toEqual(['notifications', 'reports']);
  });
});
