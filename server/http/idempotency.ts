import { randomUUID } from 'node:crypto';
import { and, eq, sql } from 'drizzle-orm';
import { db, type Tx } from '@/server/db/client';
import { idempotencyKeys } from '@/db/schema';
import { AppError } from '@/server/errors';
import { logger } from '@/server/logger';
import { sha256 } from '@/server/lib/secret-tokens';
import type { Caller } from '@/server/services/auth';

const WAIT_FOR_FIRST_MS = 10_000;
/** A running request renews its claim this often; a claim not renewed for LEASE_SECONDS is dead. */
const RENEW_EVERY_MS = 1_500;
const LEASE_SECONDS = 5;
const KEY = /^[\x21-\x7e]{1,255}$/;
/** The holder stopped renewing (rows written before leases existed count from their creation). */
const lapsed = sql<boolean>`coalesce(${idempotencyKeys.lockedUntil}, ${idempotencyKeys.createdAt} + make_interval(secs => ${LEASE_SECONDS})) < now()`;

/** Thrown inside the request's transaction to roll its effects back while keeping its answer. */
class Rejected extends Error {
  constructor(readonly response: Response) {
    super('request rejected');
  }
}

/**
 * Idempotency-Key (docs/api.md#idempotency-keys), for POSTs that create messages. The first request with a key claims a
 * row (unique on caller + path + key) holding a short lease it renews while it runs. Its effects
 * and its stored response commit in ONE transaction, so a key is either completed with the
 * response of what committed, or nothing of the request is in the database.
 *
 * A repeat with the same body replays the stored response; with another body it is 409; while the
 * first still runs it waits (409 after 10 s). If the first request died (its lease lapsed: a killed
 * process, a lost connection), the repeat takes the key over and runs the request itself — its
 * effects were rolled back with the dead transaction, so this is the one and only run. A stalled
 * holder that wakes up after losing its lease cannot complete (the completion is fenced by the
 * holder token), so its transaction rolls back. 4xx answers are stored (a 409 replays as a 409)
 * with nothing committed; 5xx answers release the key so the client can try again.
 */
export async function withIdempotency(
  req: Request,
  caller: Caller,
  rawBody: string,
  run: (tx: Tx) => Promise<Response>,
): Promise<Response> {
  const key = req.headers.get('idempotency-key');
  if (key === null) return run(db);
  if (!KEY.test(key)) throw AppError.invalid(['header', 'Idempotency-Key'], 'must be 1–255 visible ASCII characters');

  const path = new URL(req.url).pathname;
  const requestHash = sha256(rawBody);
  const businessId = caller.kind === 'platform' ? null : caller.businessId;
  const match = and(eq(idempotencyKeys.callerScope, caller.scope), eq(idempotencyKeys.path, path), eq(idempotencyKeys.key, key));
  const holder = randomUUID();
  const lease = sql`now() + make_interval(secs => ${LEASE_SECONDS})`;

  await db.delete(idempotencyKeys).where(and(match, sql`${idempotencyKeys.expiresAt} < now()`));
  const [claimed] = await db
    .insert(idempotencyKeys)
    .values({
      businessId,
      callerScope: caller.scope,
      path,
      key,
      requestHash,
      holder,
      lockedUntil: lease,
      expiresAt: sql`now() + interval '24 hours'`,
    })
    .onConflictDoNothing()
    .returning({ id: idempotencyKeys.id });
  if (claimed) return runHolding(claimed.id, holder, run);

  const deadline = Date.now() + WAIT_FOR_FIRST_MS;
  for (;;) {
    const [row] = await db
      .select({
        id: idempotencyKeys.id,
        requestHash: idempotencyKeys.requestHash,
        state: idempotencyKeys.state,
        responseStatus: idempotencyKeys.responseStatus,
        responseBody: idempotencyKeys.responseBody,
        lapsed,
      })
      .from(idempotencyKeys)
      .where(match)
      .limit(1);
    if (!row) return withIdempotency(req, caller, rawBody, run); // the first one failed and let go
    if (row.requestHash !== requestHash) {
      throw new AppError('conflict', 'Idempotency-Key already used with a different request body');
    }
    if (row.state === 'completed') {
      return new Response(JSON.stringify(row.responseBody), {
        status: row.responseStatus ?? 200,
        headers: { 'Content-Type': 'application/json', 'Idempotent-Replayed': 'true' },
      });
    }
    if (row.lapsed) {
      const [taken] = await db
        .update(idempotencyKeys)
        .set({ holder, lockedUntil: lease })
        .where(and(eq(idempotencyKeys.id, row.id), eq(idempotencyKeys.state, 'running'), lapsed))
        .returning({ id: idempotencyKeys.id });
      if (taken) {
        logger.warn({ idempotency_key_id: row.id }, 'idempotency key taken over from a request that stopped renewing it');
        return runHolding(row.id, holder, run);
      }
      continue; // another waiter took it over first: wait for that one
    }
    if (Date.now() > deadline) throw new AppError('conflict', 'A request with this Idempotency-Key is still in progress');
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Runs the request while holding the key: renews the lease, commits effects + response together. */
async function runHolding(id: number, holder: string, run: (tx: Tx) => Promise<Response>): Promise<Response> {
  const mine = and(eq(idempotencyKeys.id, id), eq(idempotencyKeys.holder, holder), eq(idempotencyKeys.state, 'running'));
  // Created outside the request's transaction, so the renewals use their own connection.
  const renew = setInterval(() => {
    db.update(idempotencyKeys)
      .set({ lockedUntil: sql`now() + make_interval(secs => ${LEASE_SECONDS})` })
      .where(mine)
      .catch(() => {}); // a missed renewal only shortens the lease
  }, RENEW_EVERY_MS);
  renew.unref();
  try {
    let response: Response;
    try {
      response = await db.transaction(async (tx) => {
        const answer = await run(tx);
        if (answer.status >= 400) throw new Rejected(answer);
        const [completed] = await tx
          .update(idempotencyKeys)
          .set({ state: 'completed', responseStatus: answer.status, responseBody: await bodyOf(answer), lockedUntil: null })
          .where(mine)
          .returning({ id: idempotencyKeys.id });
        // The lease lapsed and another request took the key over: this run must not commit.
        if (!completed)
          throw new AppError(
            'conflict',
            'This request stalled and another request with its Idempotency-Key took over; nothing of this one was kept',
          );
        return answer;
      });
    } catch (err) {
      if (!(err instanceof Rejected)) {
        await db.delete(idempotencyKeys).where(mine);
        throw err;
      }
      response = err.response;
    }
    if (response.status >= 500) {
      await db.delete(idempotencyKeys).where(mine);
    } else if (response.status >= 400) {
      await db
        .update(idempotencyKeys)
        .set({ state: 'completed', responseStatus: response.status, responseBody: await bodyOf(response), lockedUntil: null })
        .where(mine);
    }
    return response;
  } finally {
    clearInterval(renew);
  }
}

async function bodyOf(response: Response): Promise<unknown> {
  const text = await response.clone().text();
  return text ? JSON.parse(text) : null;
}
