import { describe, expect, it } from 'vitest';
import { settleActivity } from '@/server/testing/activity';
import { createClient, createConversation, createTenant } from '@/server/testing/factories';
import type { ActivityLine } from '@/server/shared/activity';
import { createContext } from './init';
import { createCaller } from './root';

/**
 * The inbox's side of the timeline's activity lines (docs/architecture.md#event-log): the
 * `activity` procedure, and the client panel's opt-out, which needs a reason the line shows.
 */

async function callerFor(token: string) {
  const req = new Request('http://localhost:3000/api/trpc/x', {
    method: 'POST',
    headers: { host: 'localhost:3000', cookie: `session=${token}`, origin: 'http://localhost:3000' },
  });
  return createCaller(await createContext({ req }));
}

describe('the inbox reads the lines (inbox.activity)', () => {
  it('says it is behind until the handler wrote the line, answers from `since` on, and only in the business', async () => {
    const t = await createTenant();
    const client = await createClient(t.business.id);
    const conv = await createConversation(t.business.id, client.id);
    const caller = await callerFor(t.sessionToken);
    expect(await caller.inbox.activity({ conversationId: conv.id })).toEqual({ lines: [], behind: false });

    await caller.inbox.setStatus({ conversationId: conv.id, status: 'resolved' });
    // No line yet (no worker runs in this file's database; the dispatcher is run by hand below), and the inbox knows to read again.
    expect(await caller.inbox.activity({ conversationId: conv.id })).toEqual({ lines: [], behind: true });
    await settleActivity({ businessId: t.business.id, id: conv.id, clientId: client.id });
    const after = await caller.inbox.activity({ conversationId: conv.id });
    expect(after.behind).toBe(false);
    expect(after.lines.map((l: ActivityLine) => [l.type, l.actor_name, l.data.status])).toEqual([
      ['conversation.status_changed', t.owner.name, 'resolved'],
    ]);
    const at = after.lines[0]!.occurred_at;
    expect((await caller.inbox.activity({ conversationId: conv.id, since: at })).lines).toHaveLength(1);
    const later = new Date(Date.parse(at) + 1).toISOString();
    expect((await caller.inbox.activity({ conversationId: conv.id, since: later })).lines).toEqual([]);

    const other = await createTenant();
    const stranger = await callerFor(other.sessionToken);
    await expect(stranger.inbox.activity({ conversationId: conv.id })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(caller.inbox.activity({ conversationId: conv.id, since: 'yesterday' })).rejects.toMatchObject({
      code: 'BAD_REQUEST',
    });
  });

  it('a staff opt-out from the inbox needs a reason, bounded', async () => {
    const t = await createTenant();
    const client = await createClient(t.business.id);
    const caller = await callerFor(t.sessionToken);
    const bare = caller.inbox.setClientOptOut({ clientId: client.id, channel: 'sms', optedOut: true });
    await expect(bare).rejects.toMatchObject({
      code: 'BAD_REQUEST',
      cause: { issues: [expect.objectContaining({ path: ['note'], message: 'Say why the client is opted out' })] },
    });
    const long = caller.inbox.setClientOptOut({ clientId: client.id, channel: 'sms', optedOut: true, note: 'x'.repeat(2001) });
    await expect(long).rejects.toMatchObject({ code: 'BAD_REQUEST' });
    const blank = caller.inbox.setClientOptOut({ clientId: client.id, channel: 'sms', optedOut: true, note: '   ' });
    await expect(blank).rejects.toMatchObject({ code: 'BAD_REQUEST' });
    expect(
      (await caller.inbox.setClientOptOut({ clientId: client.id, channel: 'sms', optedOut: true, note: 'x'.repeat(2000) }))
        .opted_out_sms,
    ).toBe(true);
  });
});
