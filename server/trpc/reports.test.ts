import { describe, expect, it } from 'vitest';
import { issueSession } from '@/server/services/auth';
import { recountConversations } from '@/server/services/reports/recount';
import {
  createClient,
  createConversation,
  createLocation,
  createMessage,
  createStaff,
  createTenant,
} from '@/server/testing/factories';
import { createContext } from './init';
import { createCaller } from './root';

/** The Reports page's procedures (docs/api.md#reports): REST's contract and role rule over tRPC. */

async function callerFor(token: string) {
  const req = new Request('http://localhost:3000/api/trpc/x', {
    method: 'GET',
    headers: { host: 'localhost:3000', cookie: `session=${token}` },
  });
  return createCaller(await createContext({ req }));
}

const range = { from: '2026-01-01T00:00:00Z', to: '2026-12-31T00:00:00Z' };

describe('tRPC reports', () => {
  it('refuses what REST refuses, naming the same field', async () => {
    const t = await createTenant();
    const trpc = await callerFor(t.sessionToken);
    const issues = (query: Record<string, string>) =>
      trpc.inbox.report({ report: 'volume', query }).then(
        () => null,
        (err: { code: string; cause: { extra: { issues: { loc: unknown[] }[] } } }) => {
          expect(err.code).toBe('UNPROCESSABLE_CONTENT');
          return err.cause.extra.issues.map((i) => i.loc);
        },
      );
    expect(await issues({ from: '2026-03-01T00:00:00Z', to: '2026-03-01T00:00:00Z' })).toEqual([['query', 'to']]);
    expect(await issues({ from: '2025-01-01T00:00:00Z', to: '2026-01-03T00:00:00Z' })).toEqual([['query', 'to']]);
    expect(await issues({ ...range, group_by: 'month' })).toEqual([['query', 'group_by']]);
    expect(await issues({ ...range, location_id: '0' })).toEqual([['query', 'location_id']]);
    // Only REST's parameters, each short: anything else is refused before any query runs.
    const refused = (query: Record<string, string>) =>
      trpc.inbox.report({ report: 'volume', query } as never).then(
        () => null,
        (err: { code: string }) => err.code,
      );
    expect(await refused({ ...range, sort: 'created_at' })).toBe('BAD_REQUEST');
    expect(await refused({ ...range, channel: 'x'.repeat(101) })).toBe('BAD_REQUEST');
    await expect(trpc.inbox.report({ report: 'volume', query: { ...range, group_by: 'day' } })).resolves.toMatchObject({
      report: 'volume',
      group_by: 'day',
    });
  });

  it('a staff member without owner or manager gets only their own figures, and no staff filter', async () => {
    const t = await createTenant();
    const [ana, ben] = [await createStaff(t.business.id, { role: 'staff' }), await createStaff(t.business.id, { role: 'staff' })];
    const anaSession = await issueSession({ kind: 'platform', scope: 'test' }, { business_id: t.business.id, staff_id: ana.id });
    // The client writes at 14:00 and Ben answers five minutes later.
    const conv = await createConversation(t.business.id, (await createClient(t.business.id)).id);
    const question = {
      direction: 'inbound',
      senderType: 'client',
      status: 'received',
      sentAt: new Date('2026-05-04T14:00:00Z'),
    } as const;
    const { id: messageId } = await createMessage(conv, question);
    await createMessage(conv, { staffId: ben.id, sentAt: new Date('2026-05-04T14:05:00Z') });
    await recountConversations(t.business.id, [{ conversationId: conv.id, messageId, at: '-infinity' }]);

    const owner = await callerFor(t.sessionToken);
    const staff = await callerFor(anaSession.token);
    expect(await owner.inbox.reportFilters()).toMatchObject({
      seesEveryone: true,
      staff: expect.arrayContaining([expect.objectContaining({ id: ben.id })]),
    });
    expect(await staff.inbox.reportFilters()).toMatchObject({ seesEveryone: false, staff: [] });
    const all = await owner.inbox.report({ report: 'response-times', query: { ...range, group_by: 'staff' } });
    expect(all.total).toMatchObject({ first_response: { count: 1, median_seconds: 300 } });
    const mine = await staff.inbox.report({ report: 'response-times', query: { ...range, group_by: 'staff' } });
    expect(mine.total).toMatchObject({ first_response: { count: 0 } });
    await expect(
      staff.inbox.report({ report: 'response-times', query: { ...range, staff_id: String(ben.id) } }),
    ).rejects.toMatchObject({
      code: 'FORBIDDEN',
    });
  });

  it('gives the page each location’s zone: the one its report reads days in', async () => {
    const t = await createTenant();
    const tokyo = await createLocation(t.business.id, { timezone: 'Asia/Tokyo' });
    const plain = await createLocation(t.business.id); // no zone of its own: the business's
    const owner = await callerFor(t.sessionToken);
    const filters = await owner.inbox.reportFilters();
    expect(filters.timeZone).toBe(t.business.timezone);
    expect(filters.locations).toEqual(
      expect.arrayContaining([
        { id: tokyo.id, name: tokyo.name, timeZone: 'Asia/Tokyo' },
        { id: plain.id, name: plain.name, timeZone: t.business.timezone },
      ]),
    );
    expect(t.business.timezone).not.toBe('Asia/Tokyo');
    for (const l of filters.locations) {
      const answer = await owner.inbox.report({ report: 'volume', query: { ...range, location_id: String(l.id) } });
      expect(answer.time_zone).toBe(l.timeZone);
    }
    expect((await owner.inbox.report({ report: 'volume', query: range })).time_zone).toBe(filters.timeZone);
  });
});
