/**
 * Staff notifications' shared names, defaults and bounds (docs/api.md#notifications): pure, so the
 * contract, the handler that writes them, the email sender and the inbox (bell, preferences page)
 * state the same rules.
 */

/**
 * What a staff member can be told:
 * - `unassigned_waiting`: a client wrote in a conversation nobody holds (auto-assignment off, or it
 *   found nobody available): every staff member who works there;
 * - `client_replied`: a client wrote in a conversation assigned to me;
 * - `assigned`: a conversation was given to me (by a colleague, the API or auto-assignment);
 * - `mentioned`: a colleague mentioned me in a note;
 * - `missed_call`: a missed call or a voicemail in my conversation, or in one nobody holds;
 * - `webhook_disabled`: an outgoing webhook endpoint was switched off (owners and managers);
 * - `waiting_digest`: email only: the conversations waiting for a reply too long, in opening hours.
 */
export const NOTIFICATION_KINDS = [
  'unassigned_waiting',
  'client_replied',
  'assigned',
  'mentioned',
  'missed_call',
  'webhook_disabled',
  'waiting_digest',
] as const;
export type NotificationKind = (typeof NOTIFICATION_KINDS)[number];

/** Each kind in words: the contract's descriptions (OpenAPI) and the inbox's Notifications settings page. */
export const NOTIFICATION_KIND_DESCRIPTIONS: Record<NotificationKind, string> = {
  unassigned_waiting: 'A client wrote in a conversation nobody holds (auto-assignment off or found nobody available)',
  client_replied: 'A client wrote in a conversation assigned to me',
  assigned: 'A conversation was assigned to me (by a colleague, the API or auto-assignment)',
  mentioned: 'A colleague mentioned me in a note',
  missed_call: 'A missed call or voicemail in my conversation, or in one nobody holds',
  webhook_disabled: 'An outgoing webhook endpoint was switched off (owners and managers)',
  waiting_digest: 'Email only: the conversations waiting for a reply longer than the business’s threshold, during opening hours',
};

/** The kinds an event makes (the digest is made by the clock, not by an event). */
export type EventNotificationKind = Exclude<NotificationKind, 'waiting_digest'>;

export const NOTIFICATION_CHANNELS = ['in_app', 'browser', 'email'] as const;
export type NotificationChannel = (typeof NOTIFICATION_CHANNELS)[number];
export type ChannelChoice = Record<NotificationChannel, boolean>;
export type NotificationPreferences = Record<NotificationKind, ChannelChoice>;

const on = (in_app: boolean, browser: boolean, email: boolean): ChannelChoice => ({ in_app, browser, email });

/**
 * What a staff member gets until they choose: everything that is theirs in the inbox and the
 * browser; email for what is addressed to them personally (assigned, a reply to them, a mention)
 * and the digest; a conversation anyone may take and a missed call stay in the inbox.
 */
export const DEFAULT_NOTIFICATION_PREFERENCES: NotificationPreferences = {
  unassigned_waiting: on(true, true, false),
  client_replied: on(true, true, true),
  assigned: on(true, true, true),
  mentioned: on(true, true, true),
  missed_call: on(true, true, false),
  webhook_disabled: on(true, false, true),
  waiting_digest: on(false, false, true),
};

/** The channels a kind can use at all: the digest is an email and nothing else. */
export const KIND_CHANNELS: Record<NotificationKind, readonly NotificationChannel[]> = {
  unassigned_waiting: NOTIFICATION_CHANNELS,
  client_replied: NOTIFICATION_CHANNELS,
  assigned: NOTIFICATION_CHANNELS,
  mentioned: NOTIFICATION_CHANNELS,
  missed_call: NOTIFICATION_CHANNELS,
  webhook_disabled: NOTIFICATION_CHANNELS,
  waiting_digest: ['email'],
};

/** What is stored: only the choices that differ from the defaults, per kind and channel. */
export type StoredNotificationPreferences = Partial<Record<NotificationKind, Partial<ChannelChoice>>>;

/** Stored choices over the defaults: what a staff member gets. */
export function resolvePreferences(stored: StoredNotificationPreferences | null | undefined): NotificationPreferences {
  const out = {} as NotificationPreferences;
  for (const kind of NOTIFICATION_KINDS) {
    const mine = stored?.[kind] ?? {};
    const choice = { ...DEFAULT_NOTIFICATION_PREFERENCES[kind] };
    for (const channel of NOTIFICATION_CHANNELS)
      choice[channel] = KIND_CHANNELS[kind].includes(channel) && (mine[channel] ?? choice[channel]);
    out[kind] = choice;
  }
  return out;
}

/** How long an email notification waits for someone to read or answer the conversation (business setting), in minutes. */
export const DEFAULT_NOTIFICATION_EMAIL_DELAY_MINUTES = 3;
export const MAX_NOTIFICATION_EMAIL_DELAY_MINUTES = 1440;
/** A conversation enters the waiting digest after waiting this many business minutes (business setting). */
export const DEFAULT_WAITING_DIGEST_MINUTES = 60;
export const MAX_WAITING_DIGEST_MINUTES = 10_080;

/** The most notifications one page of the bell lists. */
export const MAX_BELL_PAGE = 100;

/** The bell's title and body are cut to these (a client's long message is not repeated whole). */
export const MAX_NOTIFICATION_TITLE = 120;
export const MAX_NOTIFICATION_BODY = 200;

/**
 * The live stream's frame for a staff member's notifications (server/realtime/notifications.ts):
 * only their own streams get it. `notification` is the one that was written or folded into; the
 * inbox refetches the bell and, when `browser` says so, shows a browser notification.
 */
export type NotificationFrame = {
  type: 'notification';
  businessId: number;
  notification: {
    id: number;
    kind: EventNotificationKind;
    conversationId: number | null;
    title: string;
    body: string;
    count: number;
    browser: boolean;
  };
};

/** Choices as the API and the settings page show them: each kind with its own channels only. */
export type PreferencesOut = { [K in NotificationKind]: K extends 'waiting_digest' ? { email: boolean } : ChannelChoice };

export function preferencesOut(p: NotificationPreferences): PreferencesOut {
  const out: Record<string, Partial<ChannelChoice>> = {};
  for (const kind of NOTIFICATION_KINDS) out[kind] = Object.fromEntries(KIND_CHANNELS[kind].map((c) => [c, p[kind][c]]));
  return out as PreferencesOut;
}
