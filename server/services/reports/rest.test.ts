import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db } from '@/server/db/client';
import { issueSession } from '@/server/services/auth';
import { setConversationStatus } from '@/server/services/conversations';
import { createClient, createConversation, createMessage, createSmsNumber, createStaff } from '@/server/testing/factories';
import { api, getJson, restTenant } from '@/server/testing/http';
import { inboundSmsForm, postTwilio, TWILIO_PATHS } from '@/server/testing/webhooks';
import { settle as settleHandler } from '@/server/testing/assignment';
import { reportsHandler } from './handler';
import { csvField, EXPORT_COLUMNS } from './index';
import { recountConversations } from './recount';

/** Reports over REST (docs/api.md#reports): bounds, tenancy, roles, the streamed export; and the reopen case through the real paths. */

const range = 'from=2026-01-01T00:00:00Z&to=2026-12-31T00:00:00Z';

/** The activity handler, then the reports handler behind it, caught up with the log. */
const settle = () => settleHandler(reportsHandler);

describe('reports over REST', () => {
  it('refuses a bad range, unknown filters and another business, at the field', async () => {
    const t = await restTenant();
    const other = await restTenant();
    const bad = async (q: string) =>
      (await getJson(`${t.base}/reports/response-times?${q}`, t.key)).body.detail.map((d: { loc: unknown[] }) => d.loc);
    expect(await bad('from=2026-02-30T00:00:00Z&to=2026-03-01T00:00:00Z')).toEqual([['query', 'from']]);
    expect(await bad('from=2026-03-01T00:00:00Z&to=2026-03-01T00:00:00Z')).toEqual([['query', 'to']]);
    expect(await bad('from=2025-01-01T00:00:00Z&to=2026-01-03T00:00:00Z')).toEqual([['query', 'to']]);
    expect(await bad(`${range}&group_by=month`)).toEqual([['query', 'group_by']]);
    expect(await bad(`${range}&channel=voice`)).toEqual([['query', 'channel']]);
    expect(await bad(`${range}&location_id=0`)).toEqual([['query', 'location_id']]);
    expect(await bad(`${range}&staff_id=${other.owner.id}`)).toEqual([['query', 'staff_id']]);
    expect((await getJson(`${t.base}/reports/nope?${range}`, t.key)).status).toBe(422);
    expect((await getJson(`${other.base}/reports/volume?${range}`, t.key)).status).toBe(403);
    for (const r of ['response-times', 'volume', 'calls', 'deliverability']) {
      const res = await getJson(`${t.base}/reports/${r}?${range}&group_by=day`, t.key);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        report: r,
        business_id: t.business.id,
        time_zone: 'America/New_York',
        group_by: 'day',
        groups: [],
      });
    }
  });

  it('a staff session without the owner or manager role sees only its own figures', async () => {
    const t = await restTenant();
    const ana = await createStaff(t.business.id, { role: 'staff' });
    const ben = await createStaff(t.business.id, { role: 'staff' });
    const session = await issueSession({ kind: 'platform', scope: 'test' }, { business_id: t.business.id, staff_id: ana.id });
    const auth = { authorization: `Bearer ${session.token}` };
    const client = await createClient(t.business.id);
    const conv = await createConversation(t.business.id, client.id);
    const at = (m: number) => new Date(Date.UTC(2026, 4, 4, 14, m));
    const inbound = await createMessage(conv, { direction: 'inbound', senderType: 'client', status: 'received', sentAt: at(0) });
    await createMessage(conv, { staffId: ben.id, sentAt: at(5) });
    await recountConversations(t.business.id, [{ conversationId: conv.id, messageId: inbound.id, at: '-infinity' }]);

    const mine = await getJson(`${t.base}/reports/response-times?${range}&group_by=staff`, auth);
    expect(mine.body.total.first_response.count).toBe(0);
    expect((await getJson(`${t.base}/reports/response-times?${range}&staff_id=${ben.id}`, auth)).status).toBe(403);
    const all = await getJson(`${t.base}/reports/response-times?${range}&group_by=staff`, t.session); // the owner
    expect(all.body.total.first_response).toMatchObject({ count: 1, median_seconds: 300 });
    expect(all.body.groups).toEqual([expect.objectContaining({ key: ben.id })]);
    const csv = await (await api.get(`${t.base}/reports/export?${range}`, { headers: auth })).text();
    expect(csv.trim().split('\r\n')).toHaveLength(1); // the header alone
  });

  it('streams one CSV row per cycle, quoted where needed, the first rows before the last are read', async () => {
    const t = await restTenant();
    const client = await createClient(t.business.id);
    const conv = await createConversation(t.business.id, client.id);
    const n = 1200; // more than two of the cursor's batches
    const base = Date.UTC(2026, 5, 1);
    await db.execute(sql`
      insert into report_cycles (business_id, conversation_id, channel, start_message_id, started_at, client_messages, replies)
      select ${t.business.id}, ${conv.id}, 'sms', g, to_timestamp(${base / 1000} + g * 60), 1, 0 from generate_series(1, ${n}) g`);
    const res = await api.get(`${t.base}/reports/export?${range}`, { headers: t.key });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(res.headers.get('content-length')).toBeNull();
    const reader = res.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    expect(first).toBe(`${EXPORT_COLUMNS.join(',')}\r\n`);
    const second = new TextDecoder().decode((await reader.read()).value);
    expect(second.split('\r\n').filter(Boolean)).toHaveLength(500); // one batch, not the whole answer
    let rest = '';
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      rest += new TextDecoder().decode(value);
    }
    expect((second + rest).split('\r\n').filter(Boolean)).toHaveLength(n);
    expect(csvField('a "b", c')).toBe('"a ""b"", c"');
    expect(csvField('line\nbreak')).toBe('"line\nbreak"');
    expect(csvField(null)).toBe('');
  });

  it('the reopen case: a cycle after a resolution counts from its own first client message', async () => {
    const t = await restTenant();
    const number = await createSmsNumber(t.business.id);
    const client = await createClient(t.business.id);
    const text = (body: string) =>
      postTwilio(TWILIO_PATHS.smsIncoming, inboundSmsForm(number.phoneNumber, client.phoneNumber!, body));
    expect((await text('Hi, can I book Friday?')).status).toBe(200);
    const [conv] = await db.execute<{ id: number }>(sql`select id from conversations where business_id = ${t.business.id}`);
    const ref = { id: conv!.id, businessId: t.business.id, clientId: client.id };
    await createMessage(ref, { staffId: t.owner.id, sentAt: new Date(Date.now() + 1000) });
    await setConversationStatus(t.business.id, ref.id, { status: 'resolved' }, t.owner.id);
    await settle();
    // A day later (as far as the clock of this test goes: the resolution is now), the client writes again.
    await new Promise((r) => setTimeout(r, 1500));
    expect((await text('Actually, Saturday?')).status).toBe(200);
    const [second] = await db.execute<{ sent_at: Date }>(sql`
      select sent_at from messages where conversation_id = ${ref.id} and direction = 'inbound' order by id desc limit 1`);
    const replyAt = new Date(new Date(second!.sent_at).getTime() + 120_000);
    const reply = await createMessage(ref, { staffId: t.owner.id, sentAt: replyAt });
    await db.execute(sql`
      insert into events (business_id, type, conversation_id, message_id, client_id, actor_type, actor_staff_id, data)
      values (${t.business.id}, 'message.created', ${ref.id}, ${reply.id}, ${client.id}, 'staff', ${t.owner.id},
        ${JSON.stringify({ message_id: reply.id, conversation_id: ref.id, client_id: client.id, channel: 'sms', message_type: 'TEXT', direction: 'outbound', status: 'sent' })}::jsonb)`);
    await settle();
    const cycles = await db.execute<{ first_response_seconds: number; resolved_at: Date | null }>(sql`
      select first_response_seconds, resolved_at from report_cycles where conversation_id = ${ref.id} order by started_at`);
    expect(cycles).toHaveLength(2);
    expect(cycles[0]!.resolved_at).not.toBeNull();
    // Two minutes from the second text, not from the first one before the resolution.
    expect(cycles[1]).toMatchObject({ first_response_seconds: 120, resolved_at: null });
  });
});
