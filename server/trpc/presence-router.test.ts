import http from 'node:http';
import type { AddressInfo } from 'node:net';
import superjson from 'superjson';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POST } from '@/app/api/trpc/[trpc]/route';
import { createSql } from '@/db/connect';
import { isPlainBeat, servePresenceBeat } from '@/server/trpc/presence-beat';
import { PRESENCE_CHANNEL } from '@/server/services/presence';
import { createClient, createConversation, createTenant } from '@/server/testing/factories';
import { staffCaller } from '@/server/testing/trpc';
import { createContext } from './init';
import { createCaller } from './root';

/**
 * `presence.beat` (server/trpc/routers/presence.ts): a staff session only, a conversation of its own
 * business only, bounded input; a good beat is one NOTIFY on the presence channel, nothing stored.
 */
const listener = createSql(process.env.DATABASE_URL!, { max: 1 });
const heard: string[] = [];
beforeAll(() => new Promise<void>((resolve) => void listener.listen(PRESENCE_CHANNEL, (p) => heard.push(p), resolve)));
afterAll(() => listener.end());

describe('presence.beat', () => {
  it('announces the session’s staff member on a conversation of its business', async () => {
    const t = await createTenant();
    const conv = await createConversation(t.business.id, (await createClient(t.business.id)).id);
    const caller = await staffCaller(t.sessionToken);
    await caller.presence.beat({ conversationId: conv.id, state: 'noting' });
    await expect.poll(() => heard).toContain(`${t.business.id},${conv.id},${t.owner.id},noting`);
  });

  it('takes the `left` the page sends as it goes (one unbatched POST with keepalive, components/inbox/presence.tsx)', async () => {
    const t = await createTenant();
    const conv = await createConversation(t.business.id, (await createClient(t.business.id)).id);
    const res = await POST(
      new Request('http://localhost:3000/api/trpc/presence.beat', {
        method: 'POST',
        headers: {
          host: 'localhost:3000',
          origin: 'http://localhost:3000',
          cookie: `session=${t.sessionToken}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify(superjson.serialize({ conversationId: conv.id, state: 'left' })),
      }),
    );
    expect(res.status).toBe(200);
    await expect.poll(() => heard).toContain(`${t.business.id},${conv.id},${t.owner.id},left`);
  });

  it('refuses another business’s conversation (404) and a caller without a session, announcing nothing', async () => {
    const t = await createTenant();
    const conv = await createConversation(t.business.id, (await createClient(t.business.id)).id);
    const stranger = await staffCaller((await createTenant()).sessionToken);
    const before = heard.length;
    await expect(stranger.presence.beat({ conversationId: conv.id, state: 'viewing' })).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
    const anonymous = createCaller(
      await createContext({ req: new Request('http://localhost:3000/api/trpc/x', { method: 'POST' }) }),
    );
    await expect(anonymous.presence.beat({ conversationId: conv.id, state: 'viewing' })).rejects.toMatchObject({
      code: 'UNAUTHORIZED',
    });
    // A cookie write from another origin (CSRF) is refused as for every mutation.
    const req = new Request('http://localhost:3000/api/trpc/x', {
      method: 'POST',
      headers: { host: 'localhost:3000', cookie: `session=${t.sessionToken}`, origin: 'https://evil.test' },
    });
    await expect(
      createCaller(await createContext({ req })).presence.beat({ conversationId: conv.id, state: 'viewing' }),
    ).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await new Promise((r) => setTimeout(r, 200));
    expect(heard.length).toBe(before);
  });

  it.each([
    ['a conversation id of 0', { conversationId: 0, state: 'viewing' }, 'conversationId'],
    ['a conversation id past int4', { conversationId: 2 ** 31, state: 'viewing' }, 'conversationId'],
    ['a fractional id', { conversationId: 1.5, state: 'viewing' }, 'conversationId'],
    ['a string id', { conversationId: '7', state: 'viewing' }, 'conversationId'],
    ['a state not in the list', { conversationId: 1, state: 'typing' }, 'state'],
    ['no state', { conversationId: 1 }, 'state'],
  ])('refuses %s (BAD_REQUEST naming the field)', async (_what, input, field) => {
    const caller = await staffCaller((await createTenant()).sessionToken);
    await expect(caller.presence.beat(input as never)).rejects.toMatchObject({
      code: 'BAD_REQUEST',
      cause: { issues: [expect.objectContaining({ path: [field] })] },
    });
  });
});

describe('presence.beat served by the web server without Next.js (server/trpc/presence-beat.ts)', () => {
  let server: http.Server;
  let base: string;
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      if (isPlainBeat(req)) void servePresenceBeat(req, res);
      else res.writeHead(404).end('left to the tRPC route');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('answers each case as the tRPC route does, and leaves to it what is not a plain beat', async () => {
    const t = await createTenant();
    const conv = await createConversation(t.business.id, (await createClient(t.business.id)).id);
    const headers = (over: Record<string, string> = {}) => ({
      host: 'localhost:3000',
      origin: 'http://localhost:3000',
      cookie: `session=${t.sessionToken}`,
      'content-type': 'application/json',
      'x-request-id': 'req-presence-beat-1',
      ...over,
    });
    const cases: { path: string; body: string; headers: Record<string, string> }[] = [
      {
        path: 'presence.beat?batch=1',
        body: JSON.stringify({ 0: { json: { conversationId: conv.id, state: 'viewing' } } }),
        headers: headers(),
      },
      { path: 'presence.beat', body: JSON.stringify({ json: { conversationId: conv.id, state: 'left' } }), headers: headers() },
      { path: 'presence.beat', body: JSON.stringify({ json: { conversationId: 0, state: 'typing' } }), headers: headers() },
      {
        path: 'presence.beat',
        body: JSON.stringify({ json: { conversationId: 2_000_000_000, state: 'viewing' } }),
        headers: headers(),
      },
      {
        path: 'presence.beat',
        body: JSON.stringify({ json: { conversationId: conv.id, state: 'viewing' } }),
        headers: headers({ cookie: '' }),
      },
      {
        path: 'presence.beat',
        body: JSON.stringify({ json: { conversationId: conv.id, state: 'viewing' } }),
        headers: headers({ origin: 'https://evil.test' }),
      },
      { path: 'presence.beat', body: '{not json', headers: headers() },
    ];
    for (const c of cases) {
      const init = { method: 'POST', headers: c.headers, body: c.body };
      const ours = await fetch(`${base}/api/trpc/${c.path}`, init);
      const theirs = await POST(new Request(`http://localhost:3000/api/trpc/${c.path}`, init));
      expect([c.path, c.body, ours.status]).toEqual([c.path, c.body, theirs.status]);
      expect(await ours.json()).toEqual(await theirs.json());
      expect(ours.headers.get('x-content-type-options')).toBe('nosniff');
    }
    await expect.poll(() => heard).toContain(`${t.business.id},${conv.id},${t.owner.id},left`);
    // Batches of several calls, other procedures, and bodies of no declared or too large a length go on.
    const onward = [
      { path: 'presence.beat,presence.beat?batch=1', body: '{}' },
      { path: 'inbox.markRead', body: '{}' },
      {
        path: 'presence.beat',
        body: JSON.stringify({ json: { conversationId: conv.id, state: 'viewing', x: 'y'.repeat(2000) } }),
      },
    ];
    for (const c of onward) {
      const res = await fetch(`${base}/api/trpc/${c.path}`, { method: 'POST', headers: headers(), body: c.body });
      expect(await res.text()).toBe('left to the tRPC route');
    }
  });
});
