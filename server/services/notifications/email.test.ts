import { and, eq, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db } from '@/server/db/client';
import { notifications, staff } from '@/db/schema';
import { assignConversation } from '@/server/services/conversations';
import { addNote, markMessagesRead } from '@/server/services/conversations/messages';
import { submitSms } from '@/server/services/messages/submit';
import { markMentionsSeen } from '@/server/services/conversations/mentions';
import { setNotificationPreferences } from '@/server/services/notifications/preferences';
import { markNotificationsRead } from '@/server/services/notifications/read';
import { setStaffAway } from '@/server/services/staff-availability';
import { setStaffSchedule } from '@/server/services/staff-schedules';
import { assigningBusiness, newClientTexts, reply, textIn } from '@/server/testing/assignment';
import { createStaff } from '@/server/testing/factories';
import { NO_SHIFTS, notificationsOfConversation, settleNotifications } from '@/server/testing/notifications';
import { smtpSinkPerFile } from '@/server/testing/smtp-per-file';
import { MESSAGE_ID_HEADER } from '@/server/providers/types';
import { sendDueNotificationEmails } from './email';

const smtp = smtpSinkPerFile();

/** The fake clock: the handler planned the email 3 minutes after the real now. */
const later = (minutes: number) => new Date(Date.now() + minutes * 60_000);

/**
 * One staff member (Staff 1) who gets every conversation (round robin, alone), a colleague of no
 * assignment (Staff 2, away so never given one), and a client who texted: Staff 1 holds a
 * notification with an email due in 3 minutes.
 */
async function assignedConversation(settings = {}) {
  const b = await assigningBusiness({ assignment_policy: 'round_robin', ...settings }, 1);
  const colleague = await createStaff(b.businessId, { name: 'Colleague', away: true });
  const { client, conversationId } = await newClientTexts(b);
  await settleNotifications();
  const [n] = await notificationsOfConversation(b.team[0]!.id, conversationId);
  return { ...b, staff: b.team[0]!, colleague, client, conversationId, notification: n! };
}

const stateOf = async (id: number) => {
  const [row] = await db
    .select({ state: notifications.emailState, detail: notifications.emailDetail })
    .from(notifications)
    .where(eq(notifications.id, id));
  return row!;
};

describe('the delayed email notification', () => {
  it('goes once due, naming what happened and the business, with a link to the conversation', async () => {
    const t = await assignedConversation();
    expect(t.notification.emailState).toBe('pending');
    expect(t.notification.emailDueAt!.getTime()).toBeGreaterThan(Date.now() + 2 * 60_000);

    // Not due yet: nothing.
    expect(await sendDueNotificationEmails(smtp.provider(), later(1))).toEqual({ sent: 0, dropped: 0, failed: 0 });
    expect(smtp.sink().messages).toHaveLength(0);

    expect(await sendDueNotificationEmails(smtp.provider(), later(4))).toMatchObject({ sent: 1 });
    expect(smtp.sink().messages).toHaveLength(1);
    const mail = smtp.sink().messages[0]!;
    expect(mail.envelope.to).toEqual([t.staff.email]);
    expect(mail.parsed.from?.value[0]?.address).toBe('notifications@localhost');
    expect(mail.parsed.subject).toContain(t.business.name);
    expect(mail.parsed.subject).toContain(t.notification.title);
    expect(mail.parsed.text).toContain('Hi, can I book?');
    expect(mail.parsed.text).toContain(`http://localhost:3000/inbox/${t.conversationId}`);
    expect(mail.parsed.html).toContain(`href="http://localhost:3000/inbox/${t.conversationId}"`);
    // No conversation message: nothing a provider's event could be matched with.
    expect(mail.parsed.headers.has(MESSAGE_ID_HEADER.toLowerCase())).toBe(false);
    expect(JSON.parse(String(mail.parsed.headers.get('x-smtpapi'))).unique_args).toEqual({ business_id: String(t.businessId) });
    const after = await stateOf(t.notification.id);
    expect(after.state).toBe('sent');
    expect(after.detail).toMatch(/^sent as <.+@localhost>$/);

    // Never again.
    expect(await sendDueNotificationEmails(smtp.provider(), later(10))).toEqual({ sent: 0, dropped: 0, failed: 0 });
    expect(smtp.sink().messages).toHaveLength(1);
  });

  it('is dropped when the staff member read the notification (opened the conversation)', async () => {
    const t = await assignedConversation();
    await markNotificationsRead(t.businessId, t.staff.id, { conversationId: t.conversationId });
    expect(await sendDueNotificationEmails(smtp.provider(), later(4))).toMatchObject({ sent: 0, dropped: 1 });
    expect(await stateOf(t.notification.id)).toEqual({ state: 'dropped', detail: 'read: the notification was read' });
    expect(smtp.sink().messages).toHaveLength(0);
  });

  it('is dropped when anyone read the conversation past its message', async () => {
    const t = await assignedConversation();
    await markMessagesRead(t.businessId, { conversation_id: t.conversationId, is_read: true }, { type: 'api' });
    await sendDueNotificationEmails(smtp.provider(), later(4));
    expect(await stateOf(t.notification.id)).toEqual({
      state: 'dropped',
      detail: 'read: the conversation was read past its message',
    });
    expect(smtp.sink().messages).toHaveLength(0);
  });

  it('is dropped when the conversation was answered, and goes when the client wrote again after the answer', async () => {
    const t = await assignedConversation();
    await reply(t.businessId, t.colleague.id, t.client.id);
    await sendDueNotificationEmails(smtp.provider(), later(4));
    expect(await stateOf(t.notification.id)).toEqual({ state: 'dropped', detail: 'answered: a reply was written after it' });

    // A second round: the client writes, someone answers, the client writes again before the email is due.
    const u = await assignedConversation();
    await reply(u.businessId, u.colleague.id, u.client.id);
    await textIn(u, u.client, 'Still there?');
    await settleNotifications();
    const [folded] = await notificationsOfConversation(u.staff.id, u.conversationId);
    expect(folded!.id).toBe(u.notification.id);
    expect(folded!.body).toBe('Still there?');
    await sendDueNotificationEmails(smtp.provider(), later(4));
    expect((await stateOf(u.notification.id)).state).toBe('sent');
    expect(smtp.sink().messages.map((m) => m.parsed.text)).toEqual([expect.stringContaining('Still there?')]);
  });

  it('is news again when the conversation is assigned to them after the answer, whoever read it', async () => {
    const t = await assignedConversation();
    await reply(t.businessId, t.colleague.id, t.client.id);
    await sendDueNotificationEmails(smtp.provider(), later(4));
    expect(await stateOf(t.notification.id)).toEqual({ state: 'dropped', detail: 'answered: a reply was written after it' });

    // The colleague takes the conversation, then hands it back: the assignment folds into the unread
    // notification, about no message now, and plans a new email, which the earlier answer and a read
    // of the conversation do not drop.
    await assignConversation(t.businessId, t.conversationId, t.colleague.id, t.colleague.id);
    await assignConversation(t.businessId, t.conversationId, t.staff.id, t.colleague.id);
    await settleNotifications();
    const [folded] = await notificationsOfConversation(t.staff.id, t.conversationId);
    expect(folded).toMatchObject({ id: t.notification.id, kind: 'assigned', messageId: null, emailState: 'pending' });
    await markMessagesRead(t.businessId, { conversation_id: t.conversationId, is_read: true }, { type: 'api' });
    await sendDueNotificationEmails(smtp.provider(), later(8));
    expect((await stateOf(t.notification.id)).state).toBe('sent');
    expect(smtp.sink().messages).toHaveLength(1);

    // Answered after the assignment: dropped again.
    const u = await assignedConversation();
    await assignConversation(u.businessId, u.conversationId, u.colleague.id, u.colleague.id);
    await assignConversation(u.businessId, u.conversationId, u.staff.id, u.colleague.id);
    await settleNotifications();
    await reply(u.businessId, u.colleague.id, u.client.id);
    await sendDueNotificationEmails(smtp.provider(), later(8));
    expect(await stateOf(u.notification.id)).toEqual({ state: 'dropped', detail: 'answered: a reply was written after it' });

    // A client's text whose email went, then an assignment folded onto it: a new round, about the
    // assignment, so reading the conversation past the text does not drop its email.
    const v = await assignedConversation();
    await markNotificationsRead(v.businessId, v.staff.id, { conversationId: v.conversationId });
    await textIn(v, v.client, 'One more thing');
    await settleNotifications();
    const [, aboutText] = await notificationsOfConversation(v.staff.id, v.conversationId);
    expect(aboutText).toMatchObject({ kind: 'client_replied', messageId: expect.any(Number) });
    await sendDueNotificationEmails(smtp.provider(), later(4));
    expect(await stateOf(aboutText!.id)).toMatchObject({ state: 'sent' });
    await assignConversation(v.businessId, v.conversationId, v.colleague.id, v.colleague.id);
    await assignConversation(v.businessId, v.conversationId, v.staff.id, v.colleague.id);
    await settleNotifications();
    expect((await notificationsOfConversation(v.staff.id, v.conversationId))[1]).toMatchObject({
      id: aboutText!.id,
      kind: 'assigned',
      messageId: null,
      emailState: 'pending',
    });
    await markMessagesRead(v.businessId, { conversation_id: v.conversationId, is_read: true }, { type: 'api' });
    await sendDueNotificationEmails(smtp.provider(), later(8));
    expect(await stateOf(aboutText!.id)).toMatchObject({ state: 'sent' });
    expect(smtp.sink().messages.at(-1)!.parsed.subject).toContain('assigned you');
  });

  it('is dropped when the conversation is no longer open', async () => {
    const t = await assignedConversation();
    await db.execute(sql`update conversations set status = 'resolved' where id = ${t.conversationId}`);
    await sendDueNotificationEmails(smtp.provider(), later(4));
    expect(await stateOf(t.notification.id)).toEqual({ state: 'dropped', detail: 'answered: the conversation is resolved' });
  });

  it('for a mention, is dropped once the mention was seen, and not for a reply to the client', async () => {
    const t = await assignedConversation();
    // The bell's notification of the text is read; the colleague then mentions Staff 1 in a note.
    await markNotificationsRead(t.businessId, t.staff.id, { conversationId: t.conversationId });
    await setStaffAway(t.businessId, t.colleague.id, false, { type: 'api' });
    await addNote(t.businessId, t.conversationId, 'Can you call her back?', t.colleague.id, [t.staff.id]);
    await settleNotifications();
    const mention = (await notificationsOfConversation(t.staff.id, t.conversationId)).find((n) => n.readAt === null)!;
    expect(mention.kind).toBe('mentioned');
    expect(mention.emailState).toBe('pending');
    await reply(t.businessId, t.colleague.id, t.client.id);
    await markMentionsSeen(t.businessId, t.conversationId, t.staff.id);
    await sendDueNotificationEmails(smtp.provider(), later(4));
    expect(await stateOf(mention.id)).toEqual({ state: 'dropped', detail: 'read: the mention was seen' });

    // Unseen, a reply to the client does not answer a colleague's note: it goes.
    const u = await assignedConversation();
    await markNotificationsRead(u.businessId, u.staff.id, { conversationId: u.conversationId });
    await setStaffAway(u.businessId, u.colleague.id, false, { type: 'api' });
    await addNote(u.businessId, u.conversationId, 'Call her?', u.colleague.id, [u.staff.id]);
    await settleNotifications();
    const other = (await notificationsOfConversation(u.staff.id, u.conversationId)).find((n) => n.readAt === null)!;
    await reply(u.businessId, u.colleague.id, u.client.id);
    await sendDueNotificationEmails(smtp.provider(), later(4));
    expect((await stateOf(other.id)).state).toBe('sent');
  });

  it('is dropped when the staff member is away at send time, or turned email off meanwhile', async () => {
    const t = await assignedConversation();
    await setStaffAway(t.businessId, t.staff.id, true, { type: 'api' });
    await sendDueNotificationEmails(smtp.provider(), later(4));
    expect(await stateOf(t.notification.id)).toEqual({ state: 'dropped', detail: 'the staff member is away' });

    const u = await assignedConversation();
    await setNotificationPreferences(u.businessId, u.staff.id, { assigned: { email: false }, client_replied: { email: false } });
    await sendDueNotificationEmails(smtp.provider(), later(4));
    expect((await stateOf(u.notification.id)).detail).toMatch(/^the staff member turned email off for /);
    expect(smtp.sink().messages).toHaveLength(0);
  });

  it('is dropped when the staff member is off shift, no longer active, or has no address at send time', async () => {
    const t = await assignedConversation();
    await setStaffSchedule(t.businessId, t.staff.id, NO_SHIFTS);
    await sendDueNotificationEmails(smtp.provider(), later(4));
    expect(await stateOf(t.notification.id)).toEqual({ state: 'dropped', detail: 'the staff member is off shift' });

    const u = await assignedConversation();
    await db.update(staff).set({ active: false }).where(eq(staff.id, u.staff.id));
    await sendDueNotificationEmails(smtp.provider(), later(4));
    expect(await stateOf(u.notification.id)).toEqual({ state: 'dropped', detail: 'the staff member is no longer active' });

    const v = await assignedConversation();
    await db.update(staff).set({ email: ' ' }).where(eq(staff.id, v.staff.id));
    await sendDueNotificationEmails(smtp.provider(), later(4));
    expect(await stateOf(v.notification.id)).toEqual({ state: 'dropped', detail: 'the staff member has no email address' });
    expect(smtp.sink().messages).toHaveLength(0);
  });

  it('of a conversation nobody held, is dropped once someone was assigned it', async () => {
    const b = await assigningBusiness({}, 2);
    const [ana, sam] = b.team;
    await setNotificationPreferences(b.businessId, ana!.id, { unassigned_waiting: { email: true } });
    const { conversationId } = await newClientTexts(b);
    await settleNotifications();
    const [n] = await notificationsOfConversation(ana!.id, conversationId);
    expect(n).toMatchObject({ kind: 'unassigned_waiting', emailState: 'pending' });
    await assignConversation(b.businessId, conversationId, sam!.id, null);
    await sendDueNotificationEmails(smtp.provider(), later(4));
    expect(await stateOf(n!.id)).toEqual({ state: 'dropped', detail: 'taken: the conversation was assigned' });
  });

  it('is not answered by our automatic texts or a text written for later; it goes, counting the updates folded in', async () => {
    const t = await assignedConversation();
    await submitSms(
      t.businessId,
      { sender_type: 'system', messages: [{ client_id: t.client.id, message: 'Reminder: tomorrow at 3' }] } as never,
      'send',
    );
    await submitSms(
      t.businessId,
      {
        sender_type: 'staff',
        staff_id: t.colleague.id,
        send_at: new Date(Date.now() + 86_400_000),
        messages: [{ client_id: t.client.id, message: 'See you tomorrow' }],
      } as never,
      'send',
    );
    // The client writes again: folded in, the pending email keeps its time.
    await textIn(t, t.client, 'Are you open Sunday?');
    await settleNotifications();
    const [folded] = await notificationsOfConversation(t.staff.id, t.conversationId);
    expect(folded).toMatchObject({ id: t.notification.id, count: 3, emailDueAt: t.notification.emailDueAt });
    await sendDueNotificationEmails(smtp.provider(), later(4));
    expect((await stateOf(t.notification.id)).state).toBe('sent');
    const [mail] = smtp.sink().messages.filter((m) => m.envelope.to.includes(t.staff.email!));
    expect(mail!.parsed.text).toContain('3 updates in this conversation');
    expect(mail!.parsed.text).toContain('Are you open Sunday?');
  });

  it('waits the business’s delay', async () => {
    const t = await assignedConversation({ notification_email_delay_minutes: 30 });
    expect(await sendDueNotificationEmails(smtp.provider(), later(20))).toMatchObject({ sent: 0 });
    expect(await sendDueNotificationEmails(smtp.provider(), later(31))).toMatchObject({ sent: 1 });
    expect((await stateOf(t.notification.id)).state).toBe('sent');
  });

  it('is never sent twice: two sweeps at once send one email', async () => {
    const t = await assignedConversation();
    const results = await Promise.all([
      sendDueNotificationEmails(smtp.provider(), later(4)),
      sendDueNotificationEmails(smtp.provider(), later(4)),
    ]);
    expect(results.reduce((n, r) => n + r.sent, 0)).toBe(1);
    await new Promise((r) => setTimeout(r, 200));
    expect(smtp.sink().messages.filter((m) => m.envelope.to.includes(t.staff.email!))).toHaveLength(1);
  });

  it('records the provider’s refusal and does not try again', async () => {
    const b = await assigningBusiness({ assignment_policy: 'round_robin' }, 1, { email: 'nobody@bounce.test' });
    const { conversationId } = await newClientTexts(b);
    await settleNotifications();
    const [n] = await notificationsOfConversation(b.team[0]!.id, conversationId);
    expect(await sendDueNotificationEmails(smtp.provider(), later(4))).toMatchObject({ sent: 0, failed: 1 });
    const after = await stateOf(n!.id);
    expect(after.state).toBe('dropped');
    expect(after.detail).toMatch(/^not sent: the email provider failed: /);
    expect(await sendDueNotificationEmails(smtp.provider(), later(10))).toMatchObject({ failed: 0 });
    const [row] = await db
      .select({ n: sql<number>`count(*)::int` })
      .from(notifications)
      .where(and(eq(notifications.id, n!.id), eq(notifications.emailState, 'pending')));
    expect(row!.n).toBe(0);
  });
});
