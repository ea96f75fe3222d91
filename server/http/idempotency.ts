import { and, eq, sql } from 'drizzle-orm';
import { db } from '@/db/client';
import { idempotencyKeys } from '@/db/schema';
import { AppError } from '@/server/errors';
import { sha256, type Caller } from '@/server/services/auth';

const WAIT_FOR_FIRST_MS = 10_000;
const KEY = /^[\x21-\x7e]{1,255}$/;

/**
 * SPEC §6.1 Idempotency-Key, for POSTs that create messages. The first request with a key claims a
 * row (unique on caller + path + key); a repeat with the same body replays the stored response, a
 * repeat with another body is 409, and a repeat while the first still runs waits for it (409 after
 * 10 s). Server-side failures (5xx) release the key so the client can try again.
 */
export async function withIdempotency(
  req: Request,
  caller: Caller,
  rawBody: string,
  run: () => Promise<Response>,
): Promise<Response> {
  const key = req.headers.get('idempotency-key');
  if (key === null) return run();
  if (!KEY.test(key)) throw AppError.invalid(['header', 'Idempotency-Key'], 'must be 1–255 visible ASCII characters');

  const path = new URL(req.url).pathname;
  const requestHash = sha256(rawBody);
  const businessId = caller.kind === 'platform' ? null : caller.businessId;
  const match = and(eq(idempotencyKeys.callerScope, caller.scope), eq(idempotencyKeys.path, path), eq(idempotencyKeys.key, key));

  await db.delete(idempotencyKeys).where(and(match, sql`${idempotencyKeys.expiresAt} < now()`));
  const [claimed] = await db
    .insert(idempotencyKeys)
    .values({ businessId, callerScope: caller.scope, path, key, requestHash, expiresAt: sql`now() + interval '24 hours'` })
    .onConflictDoNothing()
    .returning({ id: idempotencyKeys.id });

  if (claimed) {
    let response: Response;
    try {
      response = await run();
    } catch (err) {
      await db.delete(idempotencyKeys).where(eq(idempotencyKeys.id, claimed.id));
      throw err;
    }
    if (response.status >= 500) {
      await db.delete(idempotencyKeys).where(eq(idempotencyKeys.id, claimed.id));
      return response;
    }
    const text = await response.clone().text();
    await db
      .update(idempotencyKeys)
      .set({ state: 'completed', responseStatus: response.status, responseBody: text ? JSON.parse(text) : null })
      .where(eq(idempotencyKeys.id, claimed.id));
    return response;
  }

  const deadline = Date.now() + WAIT_FOR_FIRST_MS;
  for (;;) {
    const [row] = await db.select().from(idempotencyKeys).where(match).limit(1);
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
    if (Date.now() > deadline) throw new AppError('conflict', 'A request with this Idempotency-Key is still in progress');
    await new Promise((r) => setTimeout(r, 50));
  }
}
