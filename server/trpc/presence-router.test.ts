import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSql } from '@/db/connect';
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
