import { describe, expect, it } from 'vitest';
import type { LoggedEvent } from '@/server/services/events/dispatch';
import { DEFAULT_NOTIFICATION_PREFERENCES, resolvePreferences } from '@/server/shared/notifications';
import { LATE_MS, plan, STALE_MS, type Context, type StaffMember } from './recipients';

/**
 * Who is told what (docs/api.md#notifications), rule by rule, without a database: each kind's
 * addressees, and who is never told — the actor, staff elsewhere, staff who chose not to be; away
 * or off-shift staff only in the inbox.
 */

const member = (id: number, fields: Partial<StaffMember> = {}): StaffMember => ({
  id,
  name: `Staff ${id}`,
  role: 'staff',
  locationId: null,
  available: true,
  hasEmail: true,
  preferences: null,
  ...fields,
});
const NOW = new Date('2026-11-27T15:00:00Z');
function context(staff: StaffMember[], assignedStaffId: number | null = null, locationId: number | null = null): Context {
  return {
    staff: new Map(staff.map((s) => [s.id, s])),
    conversations: new Map([[7, { id: 7, assignedStaffId, locationId, clientLabel: 'Maria Lopez' }]]),
    messages: new Map([
      [70, { id: 70, content: 'Can I come at   3?\nThanks', callOutcome: null, durationSeconds: null }],
      [71, { id: 71, content: null, callOutcome: 'missed', durationSeconds: 0 }],
      [72, { id: 72, content: null, callOutcome: null, durationSeconds: 95 }],
    ]),
    emailDelayMinutes: 3,
    now: NOW,
  };
}
let ids = 1;
const event = (type: LoggedEvent['type'], data: Record<string, unknown>, fields: Partial<LoggedEvent> = {}): LoggedEvent => ({
  id: ids++,
  businessId: 1,
  type,
  conversationId: 7,
  messageId: null,
  clientId: 3,
  actor: { type: 'client' },
  data,
  occurredAt: NOW,
  ...fields,
});
const received = () =>
  event('message.received', { message_type: 'TEXT', channel: 'sms', direction: 'inbound' }, { messageId: 70 });
const who = (planned: ReturnType<typeof plan>) => planned.map((p) => p.staffId).sort();

describe('who is notified', () => {
  it('a client wrote, nobody holds it: everyone who works at its location (and staff of no location), not staff elsewhere', () => {
    const ctx = context([member(1, { locationId: 10 }), member(2, { locationId: 11 }), member(3)], null, 10);
    const planned = plan(received(), ctx);
    expect(who(planned)).toEqual([1, 3]);
    expect(planned[0]).toMatchObject({
      kind: 'unassigned_waiting',
      title: 'Maria Lopez is waiting (unassigned)',
      body: 'Can I come at 3? Thanks',
      conversationId: 7,
      messageId: 70,
    });
  });

  it('a client wrote in a conversation assigned to me: me only, as client_replied', () => {
    const planned = plan(received(), context([member(1), member(2)], 2));
    expect(who(planned)).toEqual([2]);
    expect(planned[0]).toMatchObject({ kind: 'client_replied', title: 'Maria Lopez wrote' });
  });

  it('a call record or a system message entering the timeline is not a client writing', () => {
    const ctx = context([member(1)]);
    expect(plan(event('message.received', { message_type: 'CALL', channel: 'voice', direction: 'inbound' }), ctx)).toEqual([]);
  });

  it('assigned to me: by a colleague (named), by auto-assignment; never when I took it myself; nobody when unassigned', () => {
    const ctx = context([member(1, { name: 'Ana' }), member(2)]);
    const byAna = plan(
      event('conversation.assigned', { staff_id: 2, by: 'manual' }, { actor: { type: 'staff', staff_id: 1 } }),
      ctx,
    );
    expect(byAna).toMatchObject([{ staffId: 2, kind: 'assigned', title: 'Ana assigned you Maria Lopez' }]);
    const auto = plan(event('conversation.assigned', { staff_id: 2, by: 'auto' }, { actor: { type: 'system' } }), ctx);
    expect(auto).toMatchObject([{ staffId: 2, title: 'Auto-assignment assigned you Maria Lopez' }]);
    expect(
      plan(event('conversation.assigned', { staff_id: 2, by: 'manual' }, { actor: { type: 'staff', staff_id: 2 } }), ctx),
    ).toEqual([]);
    expect(plan(event('conversation.assigned', { staff_id: null, by: 'manual' }, { actor: { type: 'api' } }), ctx)).toEqual([]);
    const byApi = plan(event('conversation.assigned', { staff_id: 2, by: 'manual' }, { actor: { type: 'api' } }), ctx);
    expect(byApi).toMatchObject([{ staffId: 2, title: 'The API assigned you Maria Lopez' }]);
  });

  it('mentioned in a note: each mentioned colleague, never the note’s writer, nobody not active here', () => {
    const ctx = context([member(1, { name: 'Ana' }), member(2), member(3)]);
    const planned = plan(
      event('note.created', { mentioned_staff_ids: [1, 2, 99] }, { actor: { type: 'staff', staff_id: 1 }, messageId: 70 }),
      ctx,
    );
    expect(who(planned)).toEqual([2]);
    expect(planned[0]).toMatchObject({ kind: 'mentioned', title: 'Ana mentioned you (Maria Lopez)' });
  });

  it('a missed call or voicemail: the assignee, else everyone there; an answered call or an outbound one, nobody', () => {
    const missed = event('call.completed', { direction: 'inbound', duration_seconds: 0 }, { messageId: 71 });
    expect(who(plan(missed, context([member(1), member(2)])))).toEqual([1, 2]);
    expect(plan(missed, context([member(1), member(2)], 1))).toMatchObject([
      { staffId: 1, title: 'Missed call from Maria Lopez' },
    ]);
    const voicemail = event('voicemail.received', { direction: 'inbound', duration_seconds: 95 }, { messageId: 72 });
    expect(plan(voicemail, context([member(1)], 1))).toMatchObject([
      { title: 'Voicemail from Maria Lopez', body: 'Voicemail, 1:35' },
    ]);
    const answered = event('call.completed', { direction: 'inbound', duration_seconds: 95 }, { messageId: 72 });
    expect(plan(answered, context([member(1)]))).toEqual([]);
    const outbound = event('call.completed', { direction: 'outbound', duration_seconds: 0 }, { messageId: 71 });
    expect(plan(outbound, context([member(1)]))).toEqual([]);
  });

  it('a webhook endpoint switched off: owners and managers only', () => {
    const ctx = context([member(1, { role: 'owner' }), member(2, { role: 'manager' }), member(3)]);
    const planned = plan(
      event(
        'webhook_endpoint.disabled',
        { endpoint_id: 4, reason: 'failing for 3 days' },
        { conversationId: null, actor: { type: 'system' } },
      ),
      ctx,
    );
    expect(who(planned)).toEqual([1, 2]);
    expect(planned[0]).toMatchObject({ kind: 'webhook_disabled', conversationId: null, body: 'failing for 3 days' });
  });
});

describe('channels', () => {
  it('by default: in the inbox and the browser, email due after the business’s delay for what is mine', () => {
    const [p] = plan(received(), context([member(1)], 1));
    expect(p).toMatchObject({ inApp: true, browser: true, emailDueAt: new Date(NOW.getTime() + 3 * 60_000) });
    const [unassigned] = plan(received(), context([member(1)]));
    expect(unassigned).toMatchObject({ inApp: true, browser: true, emailDueAt: null });
    // Due after the event, not after its reading (a worker back from downtime): then at once.
    const earlier = new Date(NOW.getTime() - 10 * 60_000);
    const [late] = plan({ ...received(), occurredAt: earlier }, context([member(1)], 1));
    expect(late!.emailDueAt).toEqual(new Date(earlier.getTime() + 3 * 60_000));
  });

  it('away or off shift: in the inbox only (no browser, no email)', () => {
    const [p] = plan(received(), context([member(1, { available: false })], 1));
    expect(p).toMatchObject({ inApp: true, browser: false, emailDueAt: null });
  });

  it('no address, no email', () => {
    expect(plan(received(), context([member(1, { hasEmail: false })], 1))[0]).toMatchObject({ browser: true, emailDueAt: null });
  });

  it('their choices: a channel off is off; every channel off, no notification at all', () => {
    const noBrowser = member(1, { preferences: { client_replied: { browser: false } } });
    expect(plan(received(), context([noBrowser], 1))[0]).toMatchObject({ inApp: true, browser: false });
    const nothing = member(1, { preferences: { client_replied: { in_app: false, browser: false, email: false } } });
    expect(plan(received(), context([nothing], 1))).toEqual([]);
    const emailOnly = member(1, { preferences: { client_replied: { in_app: false, browser: false } } });
    expect(plan(received(), context([emailOnly], 1))[0]).toMatchObject({ inApp: false, browser: false });
  });

  it('a late handler rings no browser and plans no email after an hour, and tells nobody after a day', () => {
    const ctx = context([member(1)], 1);
    const ago = (ms: number) => received().occurredAt.getTime() - ms;
    const at = (ms: number) => plan({ ...received(), occurredAt: new Date(ago(ms)) }, ctx);
    expect(at(LATE_MS)[0]).toMatchObject({ inApp: true, browser: true, emailDueAt: new Date(ago(LATE_MS) + 3 * 60_000) });
    expect(at(LATE_MS + 1)[0]).toMatchObject({ inApp: true, browser: false, emailDueAt: null });
    expect(at(STALE_MS)).toHaveLength(1);
    expect(at(STALE_MS + 1)).toEqual([]);
    const emailOnly = member(1, { preferences: { client_replied: { in_app: false, browser: false } } });
    expect(plan({ ...received(), occurredAt: new Date(ago(LATE_MS + 1)) }, context([emailOnly], 1))).toEqual([]);
  });

  it('long words are cut; the digest is email only whatever is stored', () => {
    const ctx = context([member(1)], 1);
    (ctx.messages as Map<number, { id: number; content: string | null; callOutcome: null; durationSeconds: null }>).set(70, {
      id: 70,
      content: 'x'.repeat(500),
      callOutcome: null,
      durationSeconds: null,
    });
    expect(plan(received(), ctx)[0]!.body).toHaveLength(200);
    const named = context([member(1)], 1);
    (named.conversations as Map<number, { id: number; assignedStaffId: number; locationId: null; clientLabel: string }>).set(7, {
      id: 7,
      assignedStaffId: 1,
      locationId: null,
      clientLabel: 'N'.repeat(300),
    });
    expect(plan(received(), named)[0]!.title).toHaveLength(120);
    expect(resolvePreferences({ waiting_digest: { in_app: true, browser: true } }).waiting_digest).toEqual({
      in_app: false,
      browser: false,
      email: DEFAULT_NOTIFICATION_PREFERENCES.waiting_digest.email,
    });
  });
});
