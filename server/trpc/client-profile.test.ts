import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db } from '@/server/db/client';
import { loggedEvents } from '@/server/testing/log-events';
import { createClient, createConversation, createTenant } from '@/server/testing/factories';
import { createContext } from './init';
import { createCaller } from './root';

/**
 * The client panel and the conversation header in the inbox: a client's name and email
 * (inbox.updateClient, the rules of PATCH /clients/{client_id}) and a conversation's label
 * (inbox.label, the rules of POST /label), each of the staff member's business only, each change an
 * event naming the staff member (docs/api.md#clients-staff-and-locations, #conversations).
 */

async function inboxCaller(token: string) {
  const req = new Request('http://localhost:3000/api/trpc/x', {
    method: 'POST',
    headers: { host: 'localhost:3000', cookie: `session=${token}`, origin: 'http://localhost:3000' },
  });
  return createCaller(await createContext({ req }));
}

describe('the inbox client panel (tRPC)', () => {
  it('renames a client of the staff member’s business only, as that staff member, with the same bounds', async () => {
    const a = await createTenant();
    const b = await createTenant();
    const lead = await createClient(a.business.id, { name: null, clientType: 'lead' });
    const theirs = await createClient(b.business.id, { name: 'Theirs' });
    const trpc = await inboxCaller(a.sessionToken);

    const renamed = await trpc.inbox.updateClient({ clientId: lead.id, name: 'Rosa Diaz', email: 'rosa@example.test' });
    expect(renamed).toMatchObject({ client_id: lead.id, client_name: 'Rosa Diaz', client_email: 'rosa@example.test' });
    expect([...(await loggedEvents(a.business.id, 'client.updated'))]).toEqual([
      {
        client_id: lead.id,
        conversation_id: null,
        actor_type: 'staff',
        actor_staff_id: a.owner.id,
        data: { client_id: lead.id, fields: ['name', 'email'] },
      },
    ]);
    await expect(trpc.inbox.updateClient({ clientId: theirs.id, name: 'Mine now' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(trpc.inbox.updateClient({ clientId: lead.id, name: 'n'.repeat(201) })).rejects.toMatchObject({
      code: 'BAD_REQUEST',
    });
    await expect(trpc.inbox.updateClient({ clientId: lead.id })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
    const [row] = await db.execute<{ name: string }>(sql`select name from clients where id = ${theirs.id}`);
    expect(row!.name).toBe('Theirs');
  });

  it('adds, changes and removes a label with the REST rules, each change a conversation.labeled event by the staff member', async () => {
    const a = await createTenant();
    const b = await createTenant();
    const conv = await createConversation(a.business.id, (await createClient(a.business.id)).id);
    const theirs = await createConversation(b.business.id, (await createClient(b.business.id)).id);
    const trpc = await inboxCaller(a.sessionToken);

    expect((await trpc.inbox.label({ conversationId: conv.id, label: '  Color ' })).label).toBe('Color');
    expect((await trpc.inbox.label({ conversationId: conv.id, label: 'Cut' })).label).toBe('Cut');
    expect((await trpc.inbox.label({ conversationId: conv.id, label: null })).label).toBeNull();
    await expect(trpc.inbox.label({ conversationId: conv.id, label: '   ' })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
    await expect(trpc.inbox.label({ conversationId: conv.id, label: 'x'.repeat(51) })).rejects.toMatchObject({
      code: 'BAD_REQUEST',
    });
    await expect(trpc.inbox.label({ conversationId: theirs.id, label: 'Mine' })).rejects.toMatchObject({ code: 'NOT_FOUND' });

    const staff = { conversation_id: conv.id, client_id: null, actor_type: 'staff', actor_staff_id: a.owner.id };
    expect([...(await loggedEvents(a.business.id, 'conversation.labeled'))]).toEqual([
      { ...staff, data: { conversation_id: conv.id, label: 'Color', previous_label: null } },
      { ...staff, data: { conversation_id: conv.id, label: 'Cut', previous_label: 'Color' } },
      { ...staff, data: { conversation_id: conv.id, label: null, previous_label: 'Cut' } },
    ]);
    expect([...(await loggedEvents(b.business.id, 'conversation.labeled'))]).toEqual([]);
    // The filters follow: no label is left to list.
    expect((await trpc.inbox.filters()).labels).toEqual([]);
  });
});
