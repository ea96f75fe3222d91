import { describe, expect, it, vi } from 'vitest';
import { GET } from '@/app/api/trpc/[trpc]/route';

/**
 * PostgreSQL unreachable while the session is being looked up (before any procedure runs): the
 * inbox gets 503 SERVICE_UNAVAILABLE, which it retries, never a 500. Found by the system test while
 * PostgreSQL restarted.
 */
vi.mock('@/server/services/auth', async (original) => ({
  ...(await original<typeof import('@/server/services/auth')>()),
  resolveSession: async () => {
    throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
  },
}));

describe('tRPC while the database is unreachable', () => {
  it('answers 503 SERVICE_UNAVAILABLE when the session cannot be looked up', async () => {
    const input = encodeURIComponent(JSON.stringify({ json: null }));
    const res = await GET(
      new Request(`http://localhost:3000/api/trpc/inbox.filters?input=${input}`, {
        headers: { host: 'localhost:3000', cookie: 'session=some-token' },
      }),
    );
    expect(res.status).toBe(503);
    const body = (await res.json()) as { error: { json: { data: { code: string } } } };
    expect(body.error.json.data.code).toBe('SERVICE_UNAVAILABLE');
  });
});
