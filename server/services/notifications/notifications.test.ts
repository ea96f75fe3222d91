import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { createSql } from '@/db/connect';
import { staff } from '@/db/schema';
import { db } from '@/server/db/client';
import { createNotificationHub } from '@/server/realtime/notifications';
import { issueSession } from '@/server/services/auth';
import { EVENT_HANDLERS } from '@/server/services/events/handlers';
import { setNotificationPreferences } from '@/server/services/notifications/preferences';
import { setStaffAway } from '@/server/services/staff-availability';
import { setStaffSchedule } from '@/server/services/staff-schedules';
import { assignConversation, setConversationStatus } from '@/server/services/conversations';
import { submitSms } from '@/server/services/messages/submit';
import { markNotificationsRead } from '@/server/services/notifications/read';
import { recordCall } from '@/server/services/voice/call-record';
import { inboundParseForm } from '@/server/providers/webhook-requests';
import { multipartBody, postBytes, twilioSid } from '@/server/testing/webhooks';
import { assigningBusiness, newClientTexts, reply, textIn } from '@/server/testing/assignment';
import { createClient, createLocation, createStaff } from '@/server/testing/factories';
import { getJson, locs, putJson, restTenant } from '@/server/testing/http';
import {
  endpointSwitchedOff,
  NO_SHIFTS,
  notificationsFor,
  notificationsOf,
  settleNotifications,
} from '@/server/testing/notifications';
import { staffCaller } from '@/server/testing/trpc';
import { ASSIGNMENT_HANDLER } from '@/server/services/assignment/handler';
import { NOTIFICATIONS_CHANNEL, NOTIFICATIONS_HANDLER, notificationsHandler } from './handler';

/**
 * Notifications through the real paths (docs/api.md#notifications): a client's text through
 * Twilio's webhook, assignment by a colleague and by auto-assignment, notes with mentions, the
 * bell's reads and the preferences over REST, each written by the real handler run behind
 * auto-assignment, and the live frame that reaches only its staff member's streams.
 */

/** A client's email through the inbound webhook. */
async function clientEmails(from: string, to: string, text: string) {
  const messageId = `<${randomUUID()}@mail.test>`;
  const { fields, files } = inboundParseForm({ from, to, subject: 'Booking', text, messageId, envelope: { from, to: [to] } });
  const { contentType, bytes } = await multipartBody(fields, files);
  return postBytes('/api/v1/email/webhooks/sendgrid/inbound?secret=dev-inbound-secret', { 'content-type': contentType }, bytes);
}

const sessionOf = async (businessId: number, staffId: number) =>
  staffCaller((await issueSession({ kind: 'platform', scope: 'test' }, { business_id: businessId, staff_id: staffId })).token);

describe('notifications handler', () => {
  it('is a handler of the log, after auto-assignment', () => {
    const names = EVENT_HANDLERS.map((h) => h.name);
    expect(names).toContain(NOTIFICATIONS_HANDLER);
    expect(notificationsHandler.after).toBe(ASSIGNMENT_HANDLER);
  });

  it('a client texts, assignment off: each staff member who works there gets one unread row; more texts fold into it', async () => {
    const b = await assigningBusiness({}, 2);
    const elsewhere = await createLocation(b.businessId);
    const other = await createStaff(b.businessId, { name: 'Elsewhere', locationId: elsewhere.id });
    const here = await createLocation(b.businessId);
    const { client, conversationId } = await newClientTexts(b, { locationId: here.id });
    await settleNotifications();
    const rows = await notificationsOf(b.businessId);
    expect(rows.map((r) => r.staffId).sort()).toEqual(b.team.map((s) => s.id).sort());
    expect(rows.map((r) => r.staffId)).not.toContain(other.id);
    expect(rows[0]).toMatchObject({
      kind: 'unassigned_waiting',
      conversationId,
      count: 1,
      inApp: true,
      browser: true,
      readAt: null,
    });
    // Unassigned: no email by default.
    expect(rows[0]!.emailState).toBeNull();
    await textIn(b, client, 'Also, do you have parking?');
    await settleNotifications();
    const again = await notificationsOf(b.businessId);
    expect(again).toHaveLength(2);
    expect(again[0]).toMatchObject({ id: rows[0]!.id, count: 2, body: 'Also, do you have parking?' });
  });

  it('a client’s email too; inactive staff never, staff off shift in the bell only', async () => {
    const b = await assigningBusiness({}, 1);
    const gone = await createStaff(b.businessId, { name: 'Gone', active: false });
    const night = await createStaff(b.businessId, { name: 'Night' });
    await setStaffSchedule(b.businessId, night.id, NO_SHIFTS);
    const client = await createClient(b.businessId, { email: 'maria@example.test', name: 'Maria Lopez' });
    expect((await clientEmails(client.email!, b.business.fromEmail!, 'Can I move to Friday?')).status).toBe(200);
    await settleNotifications();
    const rows = await notificationsOf(b.businessId);
    expect(rows.map((r) => r.staffId).sort()).toEqual([b.team[0]!.id, night.id].sort());
    expect(rows.map((r) => r.staffId)).not.toContain(gone.id);
    const byStaff = new Map(rows.map((r) => [r.staffId, r]));
    expect(byStaff.get(b.team[0]!.id)).toMatchObject({
      kind: 'unassigned_waiting',
      body: 'Can I move to Friday?',
      browser: true,
    });
    expect(byStaff.get(night.id)).toMatchObject({ inApp: true, browser: false, emailState: null });
  });

  it('a missed call, then a voicemail: everyone there while nobody holds it, then only its assignee', async () => {
    const b = await assigningBusiness({}, 2);
    const [ana, sam] = b.team;
    const { client, conversationId } = await newClientTexts(b);
    await settleNotifications();
    for (const s of b.team) await markNotificationsRead(b.businessId, s!.id, 'all');
    const call = (status: 'no_answer' | 'completed', outcome?: 'voicemail') =>
      db.transaction((tx) =>
        recordCall(
          {
            businessId: b.businessId,
            clientId: client.id,
            conversationId,
            callSid: twilioSid('CA'),
            direction: 'inbound',
            staffId: null,
            from: client.phoneNumber!,
            to: b.number,
            status,
            durationSeconds: outcome ? 42 : 0,
            outcome,
          },
          tx,
        ),
      );
    await call('no_answer');
    await settleNotifications();
    const unread = async () => (await notificationsOf(b.businessId)).filter((r) => r.readAt === null);
    expect((await unread()).map((r) => [r.staffId, r.kind, r.title]).sort()).toEqual(
      [ana!.id, sam!.id].sort().map((id) => [id, 'missed_call', `Missed call from ${client.name}`]),
    );
    for (const s of b.team) await markNotificationsRead(b.businessId, s!.id, 'all');
    await assignConversation(b.businessId, conversationId, ana!.id, null);
    await call('completed', 'voicemail');
    await settleNotifications();
    expect((await unread()).map((r) => [r.staffId, r.kind, r.title, r.body])).toEqual([
      [ana!.id, 'missed_call', `Voicemail from ${client.name}`, 'Voicemail, 0:42'],
    ]);
  });

  it('auto-assignment gives it: the assignee hears (assigned and the text, one row), colleagues nothing', async () => {
    const b = await assigningBusiness({ assignment_policy: 'round_robin' }, 3);
    const { conversationId } = await newClientTexts(b);
    await settleNotifications();
    const rows = await notificationsOf(b.businessId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ conversationId, count: 2, emailState: 'pending' });
    expect(['assigned', 'client_replied']).toContain(rows[0]!.kind);
  });

  it('auto-assignment on but nobody available: everyone hears it is waiting unassigned, in the inbox only', async () => {
    const b = await assigningBusiness({ assignment_policy: 'round_robin' }, 2);
    for (const s of b.team) await setStaffAway(b.businessId, s.id, true, { type: 'staff', staff_id: s.id });
    await newClientTexts(b);
    await settleNotifications();
    const rows = await notificationsOf(b.businessId);
    expect(rows).toHaveLength(2);
    for (const r of rows) expect(r).toMatchObject({ kind: 'unassigned_waiting', inApp: true, browser: false, emailState: null });
  });

  it('assigned by a colleague: the assignee hears, named; taking it oneself tells nobody', async () => {
    const b = await assigningBusiness({}, 2);
    const [ana, sam] = b.team;
    const { conversationId } = await newClientTexts(b);
    await settleNotifications();
    const asAna = await sessionOf(b.businessId, ana!.id);
    await asAna.inbox.markNotificationsRead({ all: true });
    await asAna.inbox.assign({ conversationId, staffId: sam!.id });
    await settleNotifications();
    const samRows = await notificationsFor(b.businessId, sam!.id);
    expect(samRows.at(-1)).toMatchObject({
      kind: 'assigned',
      title: `${ana!.name} assigned you ${samRows.at(-1)!.title.split(' assigned you ')[1]}`,
    });
    expect(samRows.at(-1)!.title.startsWith(`${ana!.name} assigned you`)).toBe(true);
    await asAna.inbox.assign({ conversationId, staffId: ana!.id });
    await settleNotifications();
    expect((await notificationsFor(b.businessId, ana!.id)).filter((r) => r.readAt === null)).toEqual([]);
  });

  it('a mention: the mentioned colleague, not the writer; opening the conversation reads it; the next event starts a new row', async () => {
    const b = await assigningBusiness({}, 2);
    const [ana, sam] = b.team;
    const client = await createClient(b.businessId, { phoneNumber: '+14155550123', name: 'Maria Lopez' });
    const conversationId = await textIn(b, client);
    const [asAna, asSam] = [await sessionOf(b.businessId, ana!.id), await sessionOf(b.businessId, sam!.id)];
    await settleNotifications();
    await asSam.inbox.markNotificationsRead({ all: true });
    await asAna.inbox.addNote({ conversationId, content: 'Sam, can you call her?', mentions: [sam!.id, ana!.id] });
    await settleNotifications();
    const bell = await asSam.inbox.notifications({});
    expect(bell.unread).toBe(1);
    expect(bell.items[0]).toMatchObject({
      kind: 'mentioned',
      conversationId,
      title: `${ana!.name} mentioned you (Maria Lopez)`,
      body: 'Sam, can you call her?',
      readAt: null,
    });
    // Ana wrote it: her unread rows are the text's only.
    expect((await asAna.inbox.notifications({})).items.map((i) => i.kind)).toEqual(['unassigned_waiting']);
    expect(await asSam.inbox.seeMentions({ conversationId })).toEqual({ seen: 1, notificationsRead: 1 });
    expect((await asSam.inbox.notifications({})).unread).toBe(0);
    await textIn(b, client, 'Call me after 5');
    await settleNotifications();
    const after = await asSam.inbox.notifications({});
    expect(after.unread).toBe(1);
    expect(after.items.map((i) => [i.kind, i.readAt === null])).toEqual([
      ['unassigned_waiting', true],
      ['mentioned', false],
      ['unassigned_waiting', false],
    ]);
  });

  it('the bell: newest first, the unread count, one read, all read; only one’s own', async () => {
    const b = await assigningBusiness({}, 2);
    const [ana, sam] = b.team;
    const texted = [];
    for (let i = 0; i < 3; i++) texted.push(await newClientTexts(b));
    await settleNotifications();
    const asAna = await sessionOf(b.businessId, ana!.id);
    const bell = await asAna.inbox.notifications({});
    expect(bell.unread).toBe(3);
    expect(bell.items.map((i) => i.id)).toEqual([...bell.items.map((i) => i.id)].sort((x, y) => y - x));
    const page = await asAna.inbox.notifications({ limit: 2 });
    const rest = await asAna.inbox.notifications({ before: page.items[1]!.id });
    expect([...page.items, ...rest.items].map((i) => i.id)).toEqual(bell.items.map((i) => i.id));
    const samRow = (await notificationsFor(b.businessId, sam!.id))[0]!;
    // Another's notification is no page mark of one's own.
    expect((await asAna.inbox.notifications({ before: samRow.id })).items).toEqual([]);
    // The oldest conversation's client writes again: its row, folded, moves to the top.
    await textIn(b, texted[0]!.client, 'One more thing');
    await settleNotifications();
    const moved = await asAna.inbox.notifications({});
    expect(moved.items[0]).toMatchObject({ conversationId: texted[0]!.conversationId, count: 2, body: 'One more thing' });
    expect(moved.unread).toBe(3);
    // Another's notification is not one's own to read.
    expect(await asAna.inbox.markNotificationsRead({ id: samRow.id })).toBe(0);
    expect(await asAna.inbox.markNotificationsRead({ id: bell.items[0]!.id })).toBe(1);
    expect((await asAna.inbox.notifications({})).unread).toBe(2);
    expect(await asAna.inbox.markNotificationsRead({ all: true })).toBe(2);
    expect((await asAna.inbox.notifications({})).unread).toBe(0);
    expect((await sessionOf(b.businessId, sam!.id)).inbox.notifications({})).resolves.toMatchObject({ unread: 3 });
  });

  it('"Mark all read" reads what the bell shows: one wanted by email only stays unread and its email planned', async () => {
    const b = await assigningBusiness({}, 0);
    const owner = await createStaff(b.businessId, { role: 'owner' });
    await setNotificationPreferences(b.businessId, owner.id, { webhook_disabled: { in_app: false } });
    await newClientTexts(b);
    await endpointSwitchedOff(b.businessId, 'x');
    await settleNotifications();
    const emailOnly = (await notificationsFor(b.businessId, owner.id)).find((r) => r.kind === 'webhook_disabled')!;
    expect(emailOnly).toMatchObject({ inApp: false, emailState: 'pending' });
    const asOwner = await sessionOf(b.businessId, owner.id);
    expect((await asOwner.inbox.notifications({})).items.map((i) => i.kind)).toEqual(['unassigned_waiting']);
    expect(await asOwner.inbox.markNotificationsRead({ id: emailOnly.id })).toBe(0);
    expect(await asOwner.inbox.markNotificationsRead({ all: true })).toBe(1);
    const after = (await notificationsFor(b.businessId, owner.id)).find((r) => r.id === emailOnly.id)!;
    expect(after).toMatchObject({ readAt: null, emailState: 'pending' });
  });

  it('a reply, a status change, our own automatic texts tell nobody; a webhook endpoint switched off tells owners and managers', async () => {
    const b = await assigningBusiness({}, 1);
    const owner = await createStaff(b.businessId, { role: 'owner' });
    const manager = await createStaff(b.businessId, { role: 'manager' });
    const { client, conversationId } = await newClientTexts(b);
    await settleNotifications();
    const before = await notificationsOf(b.businessId);
    await reply(b.businessId, b.team[0]!.id, client.id);
    await submitSms(
      b.businessId,
      { sender_type: 'system', messages: [{ client_id: client.id, message: 'Reminder: tomorrow at 3' }] } as never,
      'send',
    );
    await setConversationStatus(b.businessId, conversationId, { status: 'resolved' }, owner.id);
    await settleNotifications();
    expect(await notificationsOf(b.businessId)).toEqual(before);
    await endpointSwitchedOff(b.businessId, 'Failing since yesterday');
    await settleNotifications();
    const disabled = (await notificationsOf(b.businessId)).filter((r) => r.kind === 'webhook_disabled');
    expect(disabled.map((r) => r.staffId).sort()).toEqual([owner.id, manager.id].sort());
    expect(disabled[0]).toMatchObject({
      conversationId: null,
      body: 'Failing since yesterday',
      browser: false,
      emailState: 'pending',
    });
  });

  it('writes the live frame for its staff member only, at commit', async () => {
    const b = await assigningBusiness({}, 2);
    const [ana, sam] = b.team;
    const listener = createSql(process.env.DATABASE_URL!, { max: 1 });
    try {
      const frames: { staff: number; frame: string }[] = [];
      const hub = createNotificationHub((onNotify) => listener.listen(NOTIFICATIONS_CHANNEL, onNotify).then(() => true));
      expect(await hub.listening()).toBe(true);
      for (const s of [ana!, sam!])
        hub.subscribe({
          businessId: b.businessId,
          staffId: s.id,
          push: (f) => frames.push({ staff: s.id, frame: f.toString() }),
        });
      hub.subscribe({ businessId: b.businessId + 1, staffId: ana!.id, push: () => frames.push({ staff: -1, frame: '' }) });
      await db
        .update(staff)
        .set({ notificationPreferences: { unassigned_waiting: { in_app: false, browser: false, email: true } } })
        .where(eq(staff.id, sam!.id));
      const { conversationId } = await newClientTexts(b);
      await settleNotifications();
      for (let i = 0; i < 100 && frames.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
      await new Promise((r) => setTimeout(r, 100));
      // Sam wants these by email only: a row for the email, no frame, nothing in the bell.
      expect(frames.map((f) => f.staff)).toEqual([ana!.id]);
      const data = JSON.parse(frames[0]!.frame.slice('data: '.length)) as {
        json: { type: string; notification: Record<string, unknown> };
      };
      expect(data.json).toMatchObject({
        type: 'notification',
        notification: { kind: 'unassigned_waiting', conversationId, browser: true, count: 1 },
      });
      expect(frames[0]!.frame.includes('\nid:')).toBe(false);
      expect((await (await sessionOf(b.businessId, sam!.id)).inbox.notifications({})).items).toEqual([]);
    } finally {
      await listener.end();
    }
  });
});

describe('notification preferences over REST', () => {
  it('defaults, a partial change kept over the rest, 422 at the key, a colleague’s only for managers, another business 404', async () => {
    const t = await restTenant();
    const member = await createStaff(t.business.id, { role: 'staff' });
    const memberSession = {
      authorization: `Bearer ${(await issueSession({ kind: 'platform', scope: 'test' }, { business_id: t.business.id, staff_id: member.id })).token}`,
    };
    const path = (id: number) => `${t.base}/staffs/${id}/notification-preferences`;
    const first = await getJson(path(member.id), memberSession);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body.preferences.client_replied).toEqual({ in_app: true, browser: true, email: true });
    expect(first.body.preferences.waiting_digest).toEqual({ email: true });
    const changed = await putJson(path(member.id), memberSession, { preferences: { client_replied: { email: false } } });
    expect(changed.status).toBe(200);
    expect(changed.body.preferences.client_replied).toEqual({ in_app: true, browser: true, email: false });
    const second = await putJson(path(member.id), memberSession, { preferences: { mentioned: { browser: false } } });
    expect(second.body.preferences.client_replied.email).toBe(false);
    expect(second.body.preferences.mentioned).toEqual({ in_app: true, browser: false, email: true });
    const [row] = await db.select({ p: staff.notificationPreferences }).from(staff).where(eq(staff.id, member.id));
    expect(row!.p).toEqual({ client_replied: { email: false }, mentioned: { browser: false } });
    const bad = await putJson(path(member.id), memberSession, { preferences: { waiting_digest: { browser: true }, nope: {} } });
    expect(bad.status).toBe(422);
    expect(locs(bad.body)).toEqual(
      expect.arrayContaining([
        ['body', 'preferences', 'waiting_digest'],
        ['body', 'preferences', 'nope'],
      ]),
    );
    // A colleague's: the member may not, the owner (session) may, the API key may.
    expect((await getJson(path(t.owner.id), memberSession)).status).toBe(403);
    expect((await putJson(path(member.id), t.session, { preferences: { assigned: { email: false } } })).status).toBe(200);
    expect((await getJson(path(member.id), t.key)).body.preferences.assigned.email).toBe(false);
    const other = await restTenant();
    expect((await getJson(`${other.base}/staffs/${member.id}/notification-preferences`, other.key)).status).toBe(404);
  });
});
