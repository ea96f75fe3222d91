import { describe, expect, it } from 'vitest';
import { TRPCError } from '@trpc/server';
import { createClient, createConversation, createTenant } from '@/server/testing/factories';
import { createContext } from './init';
import { createCaller } from './root';

/**
 * `inbox.lookupClients`, the client lookup of the top bar's search and New message
 * (docs/api.md#client-search; the lookup itself: server/services/directory-lookup.test.ts).
 */

async function callerFor(token: string) {
  const req = new Request('http://localhost:3000/api/trpc/x', {
    method: 'POST',
    headers: { host: 'localhost:3000', cookie: `session=${token}`, origin: 'http://localhost:3000' },
  });
  return createCaller(await createContext({ req }));
}

const ids = (r: { clients: { client_id: number }[] }) => r.clients.map((c) => c.client_id);

describe('inbox.lookupClients', () => {
  it("answers the clients of the session's business only: the business is never an input", async () => {
    const a = await createTenant();
    const b = await createTenant();
    const archie = await createClient(a.business.id, { name: 'Archie Olson', phoneNumber: '+14155550175' });
    const conversation = await createConversation(a.business.id, archie.id);
    const twin = await createClient(b.business.id, { name: 'Archie Olson', phoneNumber: '+14155550175' });
    const mine = await callerFor(a.sessionToken);
    const theirs = await callerFor(b.sessionToken);
    for (const term of ['archie', '0175', '555-0175', '(415) 555-0175']) {
      expect(ids(await mine.inbox.lookupClients({ term })), term).toEqual([archie.id]);
      expect(ids(await theirs.inbox.lookupClients({ term })), term).toEqual([twin.id]);
    }
    expect((await mine.inbox.lookupClients({ term: 'archie' })).clients[0]).toMatchObject({ conversation_id: conversation.id });
    expect((await theirs.inbox.lookupClients({ term: 'archie' })).clients[0]).toMatchObject({ conversation_id: null });
    // Without a session: refused.
    const req = new Request('http://localhost:3000/api/trpc/x', { method: 'POST', headers: { host: 'localhost:3000' } });
    const anonymous = createCaller(await createContext({ req }));
    await expect(anonymous.inbox.lookupClients({ term: 'archie' })).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
  });

  it('is bounded: a term of 3 to 100 characters once trimmed, 8 clients unless asked for up to 20', async () => {
    const t = await createTenant();
    for (let i = 0; i < 21; i++) await createClient(t.business.id, { name: `Bulk Client ${String(i).padStart(2, '0')}` });
    const trpc = await callerFor(t.sessionToken);
    expect((await trpc.inbox.lookupClients({ term: '  bulk  ' })).clients).toHaveLength(8);
    expect((await trpc.inbox.lookupClients({ term: 'bulk', limit: 20 })).clients).toHaveLength(20);
    for (const input of [
      { term: 'bu' },
      { term: '  bu  ' },
      { term: 'x'.repeat(101) },
      { term: 'bulk', limit: 21 },
      { term: 'bulk', limit: 0 },
    ]) {
      const err = await trpc.inbox.lookupClients(input).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err, JSON.stringify(input)).toBeInstanceOf(TRPCError);
      expect((err as TRPCError).code).toBe('BAD_REQUEST');
    }
  });
});
