import { describe, expect, it } from 'vitest';
import { createClient, createConversation, createLocation, createSmsNumber, createTenant } from '@/server/testing/factories';
import { createContext } from './init';
import { createCaller } from './root';

async function callerFor(token: string) {
  const req = new Request('http://localhost:3000/api/trpc/x', {
    method: 'POST',
    headers: { host: 'localhost:3000', cookie: `session=${token}`, origin: 'http://localhost:3000' },
  });
  return createCaller(await createContext({ req }));
}

describe('saved replies in the inbox (tRPC)', () => {
  it('manages the business’s replies, and resolves one for a conversation with the caller as staff', async () => {
    const a = await createTenant();
    const b = await createTenant();
    await createSmsNumber(a.business.id);
    const location = await createLocation(a.business.id, { name: 'Downtown', phoneNumber: '+14155550100' });
    const ana = await createClient(a.business.id, { name: 'Ana Lima', locationId: location.id });
    const nameless = await createClient(a.business.id, { name: null, locationId: location.id });
    const conv = await createConversation(a.business.id, ana.id);
    const namelessConv = await createConversation(a.business.id, nameless.id);
    const trpc = await callerFor(a.sessionToken);
    const theirs = await callerFor(b.sessionToken);

    const created = await trpc.inbox.createSavedReply({
      title: 'Running late',
      body: 'Hi {{client.first_name}}, {{staff.first_name}} here: running late at {{location.name}}.',
      channel: null,
    });
    await trpc.inbox.createSavedReply({ title: 'Email thanks', body: 'Thanks', channel: 'email', subject: 'Thanks' });
    expect((await trpc.inbox.savedReplies({})).saved_replies.map((r) => r.title)).toEqual(['Email thanks', 'Running late']);
    expect((await trpc.inbox.savedReplies({ search: 'late', channel: 'sms' })).saved_replies.map((r) => r.title)).toEqual([
      'Running late',
    ]);
    expect((await theirs.inbox.savedReplies({})).saved_replies).toEqual([]);

    const staffFirst = a.owner.name.split(' ')[0];
    const resolved = await trpc.inbox.resolveSavedReply({ conversationId: conv.id, savedReplyId: created.saved_reply_id });
    expect(resolved).toMatchObject({
      text: `Hi Ana, ${staffFirst} here: running late at Downtown.`,
      missing: [],
      segments: 1,
      channel: null,
    });
    const missing = await trpc.inbox.resolveSavedReply({ conversationId: namelessConv.id, savedReplyId: created.saved_reply_id });
    expect(missing).toMatchObject({
      text: `Hi {{client.first_name}}, ${staffFirst} here: running late at Downtown.`,
      missing: ['client.first_name'],
    });

    // The bar: a text with a variable left unresolved cannot be sent.
    await expect(trpc.inbox.sendSms({ conversationId: namelessConv.id, message: missing.text })).rejects.toMatchObject({
      code: 'BAD_REQUEST',
    });
    expect((await trpc.inbox.sendSms({ conversationId: conv.id, message: resolved.text })).message_ids).toHaveLength(1);

    // Another business sees none of it.
    await expect(theirs.inbox.updateSavedReply({ savedReplyId: created.saved_reply_id, title: 'Mine' })).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
    await expect(trpc.inbox.resolveSavedReply({ conversationId: conv.id, savedReplyId: 2_000_000_000 })).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
    await expect(trpc.inbox.createSavedReply({ title: 'Typo', body: '{{clinet.name}}', channel: null })).rejects.toMatchObject({
      code: 'UNPROCESSABLE_CONTENT',
    });

    expect((await trpc.inbox.updateSavedReply({ savedReplyId: created.saved_reply_id, title: 'Late' })).title).toBe('Late');
    await trpc.inbox.deleteSavedReply({ savedReplyId: created.saved_reply_id });
    expect((await trpc.inbox.savedReplies({})).saved_replies.map((r) => r.title)).toEqual(['Email thanks']);
  });
});
