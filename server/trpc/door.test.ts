import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { GET, POST } from '@/app/api/trpc/[trpc]/route';
import { db } from '@/server/db/client';
import { MAX_TRPC_BATCH } from '@/server/shared/limits';
import { createClient, createConversation, createTenant } from '@/server/testing/factories';
import { api } from '@/server/testing/http';

/**
 * The inbox's own door (/api/trpc) through its real fetch handler: the same rate limit as REST,
 * a body limit, a batch limit, bounded inputs, and internal errors that never show their SQL.
 */
// Read once per file, lazily: small enough to reach in a test.
process.env.RATE_LIMIT_PER_MINUTE = '25';

const ORIGIN = 'http://localhost:3000';
type Call = { path: string; input?: unknown };

async function post(token: string, calls: Call[], init: { body?: BodyInit; headers?: Record<string, string> } = {}) {
  const body = init.body ?? JSON.stringify(Object.fromEntries(calls.map((c, i) => [i, { json: c.input ?? null }])));
  const req = new Request(`${ORIGIN}/api/trpc/${calls.map((c) => c.path).join(',')}?batch=1`, {
    method: 'POST',
    headers: {
      host: 'localhost:3000',
      origin: ORIGIN,
      cookie: `session=${token}`,
      'content-type': 'application/json',
      ...init.headers,
    },
    body,
  });
  return POST(req);
}

/** Queries travel as GET, their inputs in the URL. */
async function queries(token: string, calls: Call[]) {
  const encoded = encodeURIComponent(JSON.stringify(Object.fromEntries(calls.map((c, i) => [i, { json: c.input ?? null }]))));
  const url = `${ORIGIN}/api/trpc/${calls.map((c) => c.path).join(',')}?batch=1&input=${encoded}`;
  return GET(new Request(url, { headers: { host: 'localhost:3000', cookie: `session=${token}` } }));
}
const query = (token: string, path: string, input: unknown = null) => queries(token, [{ path, input }]);
const QUERIES = new Set(['inbox.conversation', 'inbox.list', 'inbox.search', 'session.me', 'inbox.filters']);

type Result = { result?: unknown; error?: { json: { message: string; data: { code: string; requestId?: string } } } };
const results = async (res: Response) => (await res.json()) as Result[];
const codes = async (res: Response) => (await results(res)).map((r) => r.error?.json.data.code ?? 'OK');

describe('tRPC door', () => {
  it('every call counts against the session rate limit shared with REST: a batch of N counts N', async () => {
    const t = await createTenant();
    const batch = Array.from({ length: MAX_TRPC_BATCH }, () => ({ path: 'session.me' }));
    expect(await codes(await queries(t.sessionToken, batch))).toEqual(Array(MAX_TRPC_BATCH).fill('OK'));
    // REST requests with the same session share the count: 10 + 10 tRPC calls, then 5 REST requests…
    expect(await codes(await queries(t.sessionToken, batch))).toEqual(Array(MAX_TRPC_BATCH).fill('OK'));
    for (let i = 0; i < 5; i++) {
      const res = await api.get(`/api/v1/businesses/${t.business.id}/locations`, {
        headers: { authorization: `Bearer ${t.sessionToken}` },
      });
      expect(res.status).toBe(200);
    }
    // …and the limit of 25 is reached.
    const over = await query(t.sessionToken, 'session.me');
    expect(await codes(over)).toEqual(['TOO_MANY_REQUESTS']);
  });

  it('a batch over the limit is refused before any call runs', async () => {
    const t = await createTenant();
    const res = await queries(
      t.sessionToken,
      Array.from({ length: MAX_TRPC_BATCH + 1 }, () => ({ path: 'session.me' })),
    );
    expect(res.status).toBe(400);
  });

  it('a body over 10 MiB is a 413, unread', async () => {
    const t = await createTenant();
    const huge = new Uint8Array(10 * 1024 * 1024 + 1).fill(0x20);
    const res = await post(t.sessionToken, [{ path: 'inbox.addNote' }], { body: huge });
    expect(res.status).toBe(413);
  });

  it('a malformed session cookie is no session (401), over tRPC and REST, never a 500', async () => {
    const trpc = await query('%E0%A4%A', 'session.me');
    expect(trpc.status).toBe(401);
    const rest = await api.get('/api/v1/voice-calls/token', { headers: { cookie: 'session=%E0%A4%A' } });
    expect(rest.status).toBe(401);
  });

  it('inputs carry the REST bounds: ids, pages, lengths, timestamps, storable text', async () => {
    const t = await createTenant();
    const conversation = await createConversation(t.business.id, (await createClient(t.business.id)).id);
    const cases: Call[] = [
      { path: 'inbox.conversation', input: { conversationId: 2_147_483_648 } },
      { path: 'inbox.list', input: { cursor: 2_147_483_648 } },
      { path: 'inbox.search', input: { term: 'hello', page: 2_000_000 } },
      { path: 'inbox.setStatus', input: { conversationId: conversation.id, status: 'snoozed', snoozed_until: 'next tuesday' } },
      { path: 'inbox.sendEmail', input: { conversationId: conversation.id, subject: 'Hi', message: 'x'.repeat(1_000_001) } },
      { path: 'inbox.addNote', input: { conversationId: conversation.id, content: 'a\u0000b' } },
      { path: 'inbox.label', input: { conversationId: conversation.id, label: 'x'.repeat(51) } },
    ];
    for (const call of cases) {
      const [code] = await codes(
        QUERIES.has(call.path) ? await queries(t.sessionToken, [call]) : await post(t.sessionToken, [call]),
      );
      expect(['BAD_REQUEST', 'UNPROCESSABLE_CONTENT'], call.path).toContain(code);
    }
  });

  it('an internal error reaches the browser as a generic message with the request id, never SQL', async () => {
    const t = await createTenant();
    // A real database error: the table the filters read is gone for a moment (this file's own database).
    await db.execute(sql`alter table conversation_counts rename to conversation_counts_moved`);
    let res: Response;
    try {
      res = await query(t.sessionToken, 'inbox.filters');
    } finally {
      await db.execute(sql`alter table conversation_counts_moved rename to conversation_counts`);
    }
    expect(res.status).toBe(500);
    const [result] = await results(res);
    const requestId = res.headers.get('x-request-id');
    expect(requestId).toBeTruthy();
    expect(result!.error!.json.message).toBe(`Internal error (request ${requestId})`);
    expect(result!.error!.json.data.requestId).toBe(requestId);
    expect(JSON.stringify(result)).not.toMatch(/select|conversation_counts|relation/i);
  });
});
