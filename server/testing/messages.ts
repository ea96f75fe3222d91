import { eq, sql } from 'drizzle-orm';
import { expect } from 'vitest';
import { db } from '@/server/db/client';
import { messages } from '@/db/schema';
import { jsonOf } from './http';

/** Test reads of stored messages and the checks the message API tests share. */

/** The stored row of one message. */
export const messageOf = async (id: number) => (await db.select().from(messages).where(eq(messages.id, id)))[0]!;

/** How many messages a business has stored. */
export const messageCount = async (businessId: number) =>
  (
    await db
      .select({ n: sql<number>`count(*)::int` })
      .from(messages)
      .where(eq(messages.businessId, businessId))
  )[0]!.n;

/** Checks a batch answer accepted `count` items (200, success, a request id, one message id each) and returns its body. */
export async function expectAccepted(res: Response, count = 1) {
  expect(res.status).toBe(200);
  const body = await jsonOf(res);
  expect(body).toMatchObject({
    success: true,
    request_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
    message_ids: Array.from({ length: count }, () => expect.any(Number)),
  });
  return body;
}

/** The one row a query found: fails unless it found exactly one. */
export function onlyRow<T>(rows: T[]): T {
  expect(rows).toHaveLength(1);
  return rows[0]!;
}
