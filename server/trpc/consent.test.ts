import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db } from '@/server/db/client';
import { consents } from '@/db/schema';
import { createClient, createConversation } from '@/server/testing/factories';
import { restTenant } from '@/server/testing/http';
import { createContext } from './init';
import { createCaller } from './root';

/** The client panel's consent procedures (docs/api.md#consent): tenancy through the conversation, the staff member as author. */
describe('inbox consent procedures', () => {
  it('staff read and record consent for the client of a conversation of their business only', async () => {
    const t = await restTenant();
    const other = await restTenant();
    const client = await createClient(t.business.id);
    const conversation = await createConversation(t.business.id, client.id);
    const callerFor = async (token: string) =>
      createCaller(
        await createContext({
          req: new Request('http://localhost:3000/api/trpc/x', {
            method: 'POST',
            headers: { host: 'localhost:3000', cookie: `session=${token}`, origin: 'http://localhost:3000' },
          }),
        }),
      );
    const trpc = await callerFor(t.sessionToken);
    const record = await trpc.inbox.recordConsent({
      conversationId: conversation.id,
      channel: 'sms',
      purpose: 'marketing',
      status: 'given',
      source: 'in_person',
      note: 'Asked at checkout',
    });
    expect(record).toMatchObject({ client_id: client.id, source: 'in_person', recorded_by_staff_id: t.owner.id });
    const read = await trpc.inbox.consents({ conversationId: conversation.id });
    expect(read.current).toEqual([expect.objectContaining({ channel: 'sms', purpose: 'marketing', status: 'given' })]);

    const outsider = await callerFor(other.sessionToken);
    await expect(outsider.inbox.consents({ conversationId: conversation.id })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(
      outsider.inbox.recordConsent({
        conversationId: conversation.id,
        channel: 'sms',
        purpose: 'marketing',
        status: 'withdrawn',
      }),
    ).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(await db.select().from(consents).where(eq(consents.clientId, client.id))).toHaveLength(1);
  });
});
