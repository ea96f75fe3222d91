import { describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import {
  createClient,
  createConversation,
  createLocation,
  createMessage,
  createSmsNumber,
  createStaff,
  createTenant,
} from '@/server/testing/factories';
import { getJson } from '@/server/testing/http';
import { db } from '@/server/db/client';
import { mediaContents, mediaUploads } from '@/db/schema';
import { createContext } from './init';
import { appRouter, createCaller } from './root';

async function callerFor(token: string, signal?: AbortSignal) {
  const req = new Request('http://localhost:3000/api/trpc/x', {
    method: 'POST',
    headers: { host: 'localhost:3000', cookie: `session=${token}`, origin: 'http://localhost:3000' },
  });
  return createCaller(await createContext({ req }), { signal });
}

describe('tRPC inbox router', () => {
  it('keeps the paths the browser calls, whichever file of routers/inbox/ holds the procedure', () => {
    const paths = Object.keys(appRouter._def.procedures).filter((path) => path.startsWith('inbox.'));
    expect(paths.sort()).toEqual(
      [
        'activity',
        'addNote',
        'appointments',
        'afterHoursReply',
        'assign',
        'availability',
        'cancelAppointment',
        'cancelScheduled',
        'clearLocationOpeningHours',
        'consents',
        'confirmAppointment',
        'conversation',
        'createSavedReply',
        'createWebhookEndpoint',
        'decidePossibleOptOut',
        'deleteSavedReply',
        'deleteWebhookEndpoint',
        'editScheduled',
        'emailView',
        'events',
        'filters',
        'flag',
        'label',
        'list',
        'lookupClients',
        'markRead',
        'mentionable',
        'messages',
        'openingHours',
        'optOutHistory',
        'possibleOptOut',
        'quietHours',
        'recordConsent',
        'redeliverWebhook',
        'report',
        'reportFilters',
        'reschedule',
        'resolveSavedReply',
        'retryMessage',
        'rotateWebhookSecret',
        'savedReplies',
        'search',
        'seeMentions',
        'notifications',
        'markNotificationsRead',
        'notificationPreferences',
        'setNotificationPreferences',
        'notificationEmailSettings',
        'setNotificationEmailSettings',
        'sendEmail',
        'sendLaterTimezone',
        'sendScheduledNow',
        'sendSms',
        'sendingWindows',
        'assignmentSettings',
        'setAfterHoursReply',
        'setBusinessAssignment',
        'setBusinessSendingWindow',
        'setClientOptOut',
        'setLocale',
        'setLocationAssignment',
        'setLocationSendingWindow',
        'setAway',
        'setOpeningHours',
        'setStaffCapacity',
        'setStaffSchedule',
        'setStatus',
        'staff',
        'staffSchedules',
        'startConversation',
        'testWebhookEndpoint',
        'updateClient',
        'updateSavedReply',
        'updateWebhookEndpoint',
        'webhookDeliveries',
        'webhookEndpoints',
      ]
        .map((name) => `inbox.${name}`)
        .sort(),
    );
  });

  it('lists, opens and works a conversation of the staff member’s business only', async () => {
    const a = await createTenant();
    const b = await createTenant();
    const client = await createClient(a.business.id, { name: 'Ava Stone' });
    const conv = await createConversation(a.business.id, client.id);
    const other = await createConversation(b.business.id, (await createClient(b.business.id)).id);
    const trpc = await callerFor(a.sessionToken);

    const list = await trpc.inbox.list({});
    expect(list.conversations.map((c) => c.conversation_id)).toEqual([conv.id]);
    await expect(trpc.inbox.conversation({ conversationId: other.id })).rejects.toMatchObject({ code: 'NOT_FOUND' });

    const note = await trpc.inbox.addNote({ conversationId: conv.id, content: 'Prefers Maya; allergic to PPD' });
    expect(note.data).toMatchObject({ message_type: 'NOTE', staff_name: a.owner.name });
    const notes = await trpc.inbox.messages({ conversationId: conv.id, filter: 'notes' });
    expect(notes.messages.map((m) => m.content)).toEqual(['Prefers Maya; allergic to PPD']);

    const assigned = await trpc.inbox.assign({ conversationId: conv.id, staffId: a.owner.id });
    expect(assigned.assigned_to).toBe(a.owner.name);
    const mine = await trpc.inbox.list({ assignment: 'mine' });
    expect(mine.total_conversations).toBe(1);
    const resolved = await trpc.inbox.setStatus({ conversationId: conv.id, status: 'resolved' });
    expect(resolved).toMatchObject({ status: 'resolved', resolved_by: a.owner.name });
    const filters = await trpc.inbox.filters();
    expect(filters.statuses.find((s) => s.value === 'resolved')!.count).toBe(1);
    // Staff search finds notes (REST search does not).
    const found = await trpc.inbox.search({ term: 'allergic' });
    expect(found.messages.map((m) => m.message_type)).toEqual(['NOTE']);
    await expect(trpc.inbox.search({ term: 'al' })).rejects.toMatchObject({ code: 'UNPROCESSABLE_CONTENT' });
  });

  it('takes ids and pages as JSON numbers, never coerced (the sidebar’s location filter; issue 32)', async () => {
    const a = await createTenant();
    const location = await createLocation(a.business.id);
    const client = await createClient(a.business.id);
    const here = await createConversation(a.business.id, client.id, { locationId: location.id });
    await createConversation(a.business.id, (await createClient(a.business.id)).id);
    const trpc = await callerFor(a.sessionToken);

    const filtered = await trpc.inbox.list({ location_id: location.id, page_size: 50 });
    expect(filtered.conversations.map((c) => c.conversation_id)).toEqual([here.id]);
    expect(filtered.page_size).toBe(50);
    // What a query string would carry, or a coercible value, is refused rather than read as a number.
    for (const input of [
      { location_id: String(location.id) },
      { page_size: '50' },
      { location_id: [location.id] },
      { location_id: true },
    ])
      await expect(trpc.inbox.list(input as never), JSON.stringify(input)).rejects.toMatchObject({
        code: 'BAD_REQUEST',
      });
    await expect(trpc.inbox.conversation({ conversationId: String(here.id) as never })).rejects.toMatchObject({
      code: 'BAD_REQUEST',
    });
  });

  it('pages the list and the timeline by cursor (React Query infinite queries)', async () => {
    const a = await createTenant();
    for (let i = 0; i < 3; i++) await createConversation(a.business.id, (await createClient(a.business.id)).id);
    const trpc = await callerFor(a.sessionToken);
    const first = await trpc.inbox.list({ page_size: 2 });
    const second = await trpc.inbox.list({ page_size: 2, cursor: 2 });
    expect([first.next_page, second.next_page, second.page]).toEqual([true, false, 2]);
    const ids = [...first.conversations, ...second.conversations].map((c) => c.conversation_id);
    expect(new Set(ids).size).toBe(3);

    const conv = first.conversations[0]!;
    const c = { id: conv.conversation_id!, businessId: a.business.id, clientId: conv.client_id };
    for (let i = 0; i < 3; i++) await createMessage(c, { sentAt: new Date(Date.now() - (3 - i) * 60_000), content: `m${i}` });
    const newest = await trpc.inbox.messages({ conversationId: c.id, pageSize: 2 });
    const older = await trpc.inbox.messages({ conversationId: c.id, pageSize: 2, cursor: 2 });
    expect([...newest.messages, ...older.messages].map((m) => m.content)).toEqual(['m2', 'm1', 'm0']);
  });

  it('filters: the kept counts after the inbox’s own changes, the same answer as REST for the session’s staff member', async () => {
    const a = await createTenant();
    const maya = await createStaff(a.business.id, { name: 'Maya' });
    const trpc = await callerFor(a.sessionToken);
    const [x, y, z] = [
      await createConversation(a.business.id, (await createClient(a.business.id)).id, { lastChannel: 'sms' }),
      await createConversation(a.business.id, (await createClient(a.business.id)).id, { lastChannel: 'email' }),
      await createConversation(a.business.id, (await createClient(a.business.id)).id),
    ];
    const inbound = await createMessage(
      { id: z!.id, businessId: a.business.id, clientId: z!.clientId },
      { direction: 'inbound', senderType: 'client', status: 'received', isRead: true },
    );
    await trpc.inbox.assign({ conversationId: x!.id, staffId: a.owner.id });
    await trpc.inbox.assign({ conversationId: y!.id, staffId: maya.id });
    await trpc.inbox.setStatus({ conversationId: y!.id, status: 'resolved' });
    await trpc.inbox.label({ conversationId: x!.id, label: 'VIP' });
    await trpc.inbox.flag({ messageId: inbound.id, flagged: true });
    await trpc.inbox.markRead({ conversationId: z!.id, isRead: false });

    const filters = await trpc.inbox.filters();
    expect(filters).toMatchObject({
      statuses: [
        { value: 'open', count: 2 },
        { value: 'pending', count: 0 },
        { value: 'snoozed', count: 0 },
        { value: 'resolved', count: 1 },
      ],
      assignments: [
        { value: 'all', count: 3 },
        { value: 'mine', count: 1 },
        { value: 'unassigned', count: 1 },
        { value: 'assigned', count: 2 },
      ],
      channels: [
        { value: 'sms', count: 1 },
        { value: 'email', count: 1 },
        { value: 'voice', count: 0 },
      ],
      labels: [{ value: 'VIP', count: 1 }],
      unread: 1,
      flagged: 1,
      possible_opt_out: 0,
    });
    const rest = await getJson(`/api/v1/businesses/${a.business.id}/conversations/filters?staff_id=${a.owner.id}`, {
      'x-api-key': a.apiKey,
    });
    // The inbox's own views beside REST's: the session's unseen mentions (docs/api.md#mentions), Needs attention.
    expect(filters).toEqual({ ...rest.body, mentions: 0, needs_attention: 0 });
  });

  it('staff names every staff member of the business, however many, never another business’s', async () => {
    const a = await createTenant();
    const b = await createTenant();
    const colleague = await createStaff(a.business.id, { name: 'Sarah Colorist' });
    const former = await createStaff(a.business.id, { name: 'Zed Former', active: false });
    await createStaff(b.business.id, { name: 'Someone Else' });
    // More than any page of the REST list (200): the last by name is there too.
    await db.execute(sql`
      insert into staff (business_id, name) select ${a.business.id}, 'Team ' || lpad(i::text, 3, '0') from generate_series(1, 250) i`);
    const staff = await (await callerFor(a.sessionToken)).inbox.staff();
    expect(staff.staffs).toHaveLength(253);
    expect(staff.staffs.map((s) => s.staff_name).slice(-3)).toEqual(['Team 249', 'Team 250', 'Zed Former']);
    expect(staff.staffs.find((s) => s.staff_id === former.id)).toEqual({
      staff_id: former.id,
      staff_name: 'Zed Former',
      active: false,
    });
    expect(staff.staffs.find((s) => s.staff_id === colleague.id)?.active).toBe(true);
    expect(staff.staffs.some((s) => s.staff_id === a.owner.id)).toBe(true);
  });

  it('mentionable searches the business’s active staff by any part of the name, those starting with it first, at most 8', async () => {
    const a = await createTenant();
    const b = await createTenant();
    const named = (name: string, active = true) => createStaff(a.business.id, { name, active });
    await named('Rosa Sanz');
    const sam = await named('Sam Stylist');
    await named('Sam Former', false);
    await createStaff(b.business.id, { name: 'Sam Elsewhere' });
    await named('100% Sam');
    const trpc = await callerFor(a.sessionToken);
    const names = async (query: string) => (await trpc.inbox.mentionable({ query })).map((s) => s.staff_name);
    // "Sam Stylist" starts with it, so comes before "Rosa Sanz" and "100% Sam" that only hold it.
    expect(await names('SA')).toEqual(['Sam Stylist', '100% Sam', 'Rosa Sanz']);
    expect(await trpc.inbox.mentionable({ query: 'styl' })).toEqual([
      { staff_id: sam.id, staff_name: 'Sam Stylist', role: 'staff' },
    ]);
    expect(await names('%')).toEqual(['100% Sam']); // a LIKE wildcard is a character like any other
    expect(await names('sanz')).toEqual(['Rosa Sanz']);
    for (let i = 0; i < 10; i++) await named(`Team ${String(i).padStart(2, '0')}`);
    expect(await names('team')).toEqual(Array.from({ length: 8 }, (_, i) => `Team 0${i}`));
    await expect(trpc.inbox.mentionable({ query: 'x'.repeat(31) })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
  });

  it('emailView: sanitized HTML in a CSP frame document, remote images only when asked, tenancy checked', async () => {
    const a = await createTenant();
    const b = await createTenant();
    const conv = await createConversation(a.business.id, (await createClient(a.business.id)).id);
    const html = '<p onclick="x()">Hi</p><script>alert(1)</script><img src="https://tracker.test/p.gif">';
    const email = await createMessage(conv, {
      channel: 'email',
      messageType: 'EMAIL',
      direction: 'inbound',
      providerMetadata: { html },
    });
    const textOnly = await createMessage(conv, { channel: 'email', messageType: 'EMAIL', direction: 'inbound' });
    const sms = await createMessage(conv);
    const trpc = await callerFor(a.sessionToken);

    const view = await trpc.inbox.emailView({ messageId: email.id });
    expect(view.blockedImages).toBe(1);
    expect(view.document).toContain('Content-Security-Policy');
    expect(view.document).toContain('<p>Hi</p>');
    expect(view.document).not.toMatch(/<script|onclick| src="https:\/\/tracker/);
    const withImages = await trpc.inbox.emailView({ messageId: email.id, allowRemoteImages: true });
    expect(withImages.document).toContain('src="https://tracker.test/p.gif"');
    expect(await trpc.inbox.emailView({ messageId: textOnly.id })).toEqual({ document: null, blockedImages: 0 });
    await expect(trpc.inbox.emailView({ messageId: sms.id })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect((await callerFor(b.sessionToken)).inbox.emailView({ messageId: email.id })).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
  });

  it('the composer queues an SMS to the conversation’s client through the queue operation', async () => {
    const a = await createTenant();
    await createSmsNumber(a.business.id);
    const client = await createClient(a.business.id);
    const conv = await createConversation(a.business.id, client.id);
    const trpc = await callerFor(a.sessionToken);
    const sent = await trpc.inbox.sendSms({ conversationId: conv.id, message: 'See you at 3!' });
    expect(sent.message_ids).toHaveLength(1);
    const page = await trpc.inbox.messages({ conversationId: conv.id });
    expect(page.messages[0]).toMatchObject({
      content: 'See you at 3!',
      message_status: 'queued',
      staff_name: a.owner.name,
      to_address: client.phoneNumber,
    });
  });

  it('the composer sends pictures it uploaded by media_ids; another business’s upload is refused', async () => {
    const a = await createTenant();
    const b = await createTenant();
    await createSmsNumber(a.business.id);
    const conv = await createConversation(a.business.id, (await createClient(a.business.id)).id);
    const upload = async (businessId: number, staffId: number) => {
      await db.insert(mediaContents).values({ businessId, sha256: 'a'.repeat(64), sizeBytes: 6, bytes: Buffer.from('GIF89a') });
      const [row] = await db
        .insert(mediaUploads)
        .values({
          businessId,
          contentType: 'image/gif',
          sizeBytes: 6,
          sha256: 'a'.repeat(64),
          uploadedBy: 'staff',
          staffId,
        })
        .returning({ id: mediaUploads.id });
      return row!.id;
    };
    const mine = await upload(a.business.id, a.owner.id);
    const theirs = await upload(b.business.id, b.owner.id);
    const trpc = await callerFor(a.sessionToken);
    await expect(
      trpc.inbox.sendSms({ conversationId: conv.id, message: 'Your color', media_ids: [mine, theirs] }),
    ).rejects.toMatchObject({
      code: 'UNPROCESSABLE_CONTENT',
    });
    await trpc.inbox.sendSms({ conversationId: conv.id, message: 'Your color', media_ids: [mine] });
    const page = await trpc.inbox.messages({ conversationId: conv.id });
    expect(page.messages).toHaveLength(1);
    expect(page.messages[0]!.attachments).toEqual([
      { filename: 'media-0.gif', content_type: 'image/gif', url: null, size: 6, media_id: mine },
    ]);
  });

  it('inbox.events is served by the web server; reached here it ends at once with SERVICE_UNAVAILABLE, which the client retries', async () => {
    const a = await createTenant();
    const iterable = (await (await callerFor(a.sessionToken)).inbox.events()) as AsyncIterable<unknown>;
    const outcome = await (async () => {
      for await (const _ of iterable) return 'an event';
      return 'ended without an error';
    })().catch((err: { code?: string }) => err.code);
    expect(outcome).toBe('SERVICE_UNAVAILABLE');
    // Without a session it is refused before that, as every staff procedure.
    await expect((await callerFor('not-a-session')).inbox.events()).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
  });
});
