import { describe, expect, it } from 'vitest';
import { activityWho, describeActivity, type ActivityLine } from './activity';

/** The activity lines in words (docs/architecture.md#event-log): who, what, and the note given. */
const line = (over: Partial<ActivityLine>): ActivityLine => ({
  activity_id: 1,
  event_id: 1,
  type: 'conversation.assigned',
  occurred_at: '2026-05-01T10:00:00.000Z',
  actor_type: 'staff',
  actor_staff_id: 5,
  actor_name: 'Ana Lopez',
  staff_name: null,
  previous_staff_name: null,
  data: {},
  ...over,
});
const say = (l: ActivityLine) => describeActivity(l, (iso) => `<${iso}>`);

describe('activity lines in words', () => {
  it('names who acted: staff by name, else the client, the system, the API, the carrier or email provider', () => {
    expect(activityWho(line({}))).toBe('Ana Lopez');
    expect(activityWho(line({ actor_name: null }))).toBe('A former staff member');
    expect(activityWho(line({ actor_type: 'client', actor_name: null }))).toBe('The client');
    expect(activityWho(line({ actor_type: 'system', actor_name: null }))).toBe('Automatically');
    expect(activityWho(line({ actor_type: 'api', actor_name: null }))).toBe('The API');
    expect(activityWho(line({ actor_type: 'api', actor_name: 'Ana Lopez' }))).toBe('Ana Lopez (API)');
    expect(activityWho(line({ actor_type: 'provider', data: { channel: 'sms' } }))).toBe('The carrier');
    expect(activityWho(line({ actor_type: 'provider', data: { channel: 'email' } }))).toBe('The email provider');
  });

  it('says each kind of change', () => {
    expect(say(line({ data: { staff_id: 6 }, staff_name: 'Ben' })).what).toBe('assigned the conversation to Ben');
    expect(say(line({ data: { staff_id: 5 } })).what).toBe('assigned the conversation to themselves');
    expect(say(line({ data: { staff_id: null }, previous_staff_name: 'Ben' })).what).toBe('unassigned Ben');
    // Auto-assignment's, said by the system: "Automatically assigned to Ben".
    const auto = (data: Record<string, unknown>) =>
      say(line({ actor_type: 'system', data: { ...data, by: 'auto' }, staff_name: 'Ben', previous_staff_name: 'Ana' }));
    expect(auto({ staff_id: 6 })).toEqual({ who: 'Automatically', what: 'assigned to Ben', note: null });
    expect(auto({ staff_id: null }).what).toBe('handed the conversation back from Ana, who is away');
    const status = (data: Record<string, unknown>, actor: ActivityLine['actor_type'] = 'staff') =>
      say(line({ type: 'conversation.status_changed', actor_type: actor, data })).what;
    expect(status({ status: 'resolved', previous_status: 'open' })).toBe('resolved the conversation');
    expect(status({ status: 'pending', previous_status: 'open' })).toBe('marked the conversation pending');
    expect(status({ status: 'open', previous_status: 'resolved' })).toBe('reopened the conversation');
    expect(status({ status: 'open', previous_status: 'snoozed' })).toBe('woke the conversation');
    expect(status({ status: 'open', previous_status: 'resolved' }, 'client')).toBe(
      'reopened the conversation with a new message',
    );
    expect(say(line({ type: 'conversation.snoozed', data: { snoozed_until: '2026-05-02T09:00:00.000Z' } })).what).toBe(
      'snoozed the conversation until <2026-05-02T09:00:00.000Z>',
    );
    expect(say(line({ type: 'conversation.woke', actor_type: 'system' })).what).toBe('woke the conversation: its snooze ended');
    const label = (data: Record<string, unknown>) => say(line({ type: 'conversation.labeled', data })).what;
    expect(label({ label: 'VIP', previous_label: null })).toBe('labeled it “VIP”');
    expect(label({ label: 'VIP', previous_label: 'New' })).toBe('changed the label from “New” to “VIP”');
    expect(label({ label: null, previous_label: 'VIP' })).toBe('removed the label “VIP”');
  });

  it('says opt-outs, opt-ins and consent, with the reason or the client’s words as the note', () => {
    const out = (data: Record<string, unknown>, actor: ActivityLine['actor_type'] = 'staff') =>
      say(line({ type: 'client.opted_out', actor_type: actor, data: { note: null, ...data } }));
    expect(out({ channel: 'sms', source: 'staff', note: 'Moved abroad' })).toMatchObject({
      who: 'Ana Lopez',
      what: 'opted the client out of texts',
      note: 'Moved abroad',
    });
    expect(out({ channel: 'sms', source: 'keyword' }, 'client')).toEqual({
      who: 'The client',
      what: 'opted out of texts with a reply keyword',
      note: null,
    });
    expect(out({ channel: 'email', source: 'provider_error' }, 'provider')).toMatchObject({
      who: 'The email provider',
      what: 'reported an unsubscribe, spam report or bounce: opted out of email',
    });
    expect(out({ channel: 'sms', source: 'import' }, 'api').what).toBe('opted the client out of texts by import');
    const back = (data: Record<string, unknown>) =>
      say(line({ type: 'client.opted_in', data: { channel: 'sms', note: null, ...data } }));
    expect(back({ source: 'in_person', note: 'Asked at the desk' })).toMatchObject({
      what: 'opted the client back in to texts (the client asked in person)',
      note: 'Asked at the desk',
    });
    expect(back({ source: 'staff' }).what).toBe('opted the client back in to texts');
    expect(back({ source: 'keyword' }).what).toBe('opted back in to texts with a reply keyword');
    const consent = say(
      line({
        type: 'consent.recorded',
        data: { channel: 'sms', purpose: 'marketing', status: 'withdrawn', source: 'phone_call' },
      }),
    );
    expect(consent.what).toBe('recorded marketing consent for texts: withdrawn by phone');
  });
});
