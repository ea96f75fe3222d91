import { sql, type SQL } from 'drizzle-orm';
import type { AnyPgColumn } from 'drizzle-orm/pg-core';

/**
 * Every enumeration of docs/api.md#enumerations, as const arrays: the DB CHECK constraints, the TypeScript unions
 * and the zod schemas (server/schemas) are all derived from these, so they cannot disagree.
 */
export const CHANNELS = ['sms', 'email', 'voice'] as const;
export const MESSAGE_CATEGORIES = ['conversational', 'campaign', 'transactional', 'reminder'] as const;
export const NOTIFICATION_TYPES = [
  'general',
  'notification_opt_in',
  'appointment_confirmation',
  'appointment_reminder',
  'review_request',
  'marketing',
] as const;
export const PROVIDERS = ['twilio', 'smtp', 'sendgrid', 'sandbox'] as const;
export const USER_TYPES = ['client', 'staff', 'system'] as const;
export const CLIENT_TYPES = ['lead', 'new', 'returning', 'vip'] as const;
// Defined with the browser-safe vocabularies (the inbox's status tabs read it too).
export {
  CONVERSATION_STATUSES,
  NEEDS_ATTENTION_REASONS,
  type ConversationStatus,
  type NeedsAttentionReason,
} from '../../server/shared/conversations';
export const ASSIGNMENT_FILTERS = ['all', 'mine', 'unassigned', 'assigned'] as const;
export const MESSAGE_FILTERS = ['all', 'sms', 'email', 'voice', 'notes', 'flagged', 'unread'] as const;
export const MESSAGE_TYPES = ['TEXT', 'EMAIL', 'CALL', 'NOTE'] as const;
export const DIRECTIONS = ['inbound', 'outbound'] as const;
/**
 * How a message came to be (docs/api.md#record-mode): `send` a send request (the API's queue mode,
 * the inbox composer, a re-queue or retry), `system` the product itself (automatic answers, notes),
 * `record` record mode (a mirror of what another system already did), `webhook` a provider's
 * webhook (inbound texts and emails, calls). Only `send` and `system` messages are ever sent.
 */
export const MESSAGE_ORIGINS = ['send', 'system', 'record', 'webhook'] as const;
/** The origins whose messages a send worker may claim and the recovery sweep may re-enqueue. */
export const SENDABLE_ORIGINS = ['send', 'system'] as const satisfies readonly (typeof MESSAGE_ORIGINS)[number][];
export const STAFF_ROLES = ['owner', 'manager', 'staff'] as const;
/** Auto-assignment (docs/api.md#auto-assignment): none, in turn, or to whoever has fewest waiting. */
export const ASSIGNMENT_POLICIES = ['off', 'round_robin', 'balanced'] as const;
// Defined with the browser-safe vocabularies (the statuses' meanings, server/shared/message-statuses.ts).
export { MESSAGE_STATUSES, type MessageStatus } from '../../server/shared/message-statuses';
export const ONBOARDING_STATUSES = ['pending', 'in_progress', 'completed', 'failed'] as const;
export const WEBHOOK_OUTCOMES = ['pending', 'processed', 'ignored', 'failed'] as const;
/** The channels an address can opt out of (docs/api.md#opt-out). */
export const OPT_OUT_CHANNELS = ['sms', 'email'] as const;
/** What recorded an opt-out: a STOP reply, staff, a provider refusal or bounce, the API, an import, the 0010 migration of the old client flags. */
export const OPT_OUT_SOURCES = ['keyword', 'staff', 'provider_error', 'api', 'import', 'migrated'] as const;
/** What an opt-out history record says happened to the address (docs/api.md#opt-out). */
export const OPT_OUT_ACTIONS = ['opt_out', 'opt_in'] as const;
/**
 * How a client asked staff or the API to get a channel again: what an explicit opt-in states
 * (docs/api.md#opt-out). Their own START, UNSTOP or YES is source `keyword`.
 */
export const OPT_IN_SOURCES = ['in_person', 'phone_call', 'paper_form', 'web_form', 'email', 'text_message'] as const;
/** The source of an opt-out history record: an opt-out's, or an opt-in's (keyword, staff, api, or how the client asked). */
export const OPT_OUT_EVENT_SOURCES = [...OPT_OUT_SOURCES, ...OPT_IN_SOURCES] as const;
/** Consent records (docs/api.md#consent): per client, channel and purpose, given or withdrawn. */
export const CONSENT_CHANNELS = OPT_OUT_CHANNELS;
export const CONSENT_PURPOSES = ['transactional', 'marketing'] as const;
export const CONSENT_STATUSES = ['given', 'withdrawn'] as const;
/** How the client gave or withdrew it. */
export const CONSENT_SOURCES = [
  'web_form',
  'in_person',
  'phone_call',
  'paper_form',
  'keyword',
  'import',
  'api',
  'staff',
] as const;

export type Channel = (typeof CHANNELS)[number];
export type MessageCategory = (typeof MESSAGE_CATEGORIES)[number];
export type NotificationType = (typeof NOTIFICATION_TYPES)[number];
export type Provider = (typeof PROVIDERS)[number];
export type UserType = (typeof USER_TYPES)[number];
export type ClientType = (typeof CLIENT_TYPES)[number];
export type MessageType = (typeof MESSAGE_TYPES)[number];
export type Direction = (typeof DIRECTIONS)[number];
export type MessageOrigin = (typeof MESSAGE_ORIGINS)[number];
export type StaffRole = (typeof STAFF_ROLES)[number];
export type AssignmentPolicy = (typeof ASSIGNMENT_POLICIES)[number];
export type OnboardingStatus = (typeof ONBOARDING_STATUSES)[number];
export type WebhookOutcome = (typeof WEBHOOK_OUTCOMES)[number];
export type OptOutChannel = (typeof OPT_OUT_CHANNELS)[number];
export type OptOutSource = (typeof OPT_OUT_SOURCES)[number];
export type OptOutAction = (typeof OPT_OUT_ACTIONS)[number];
export type OptInSource = (typeof OPT_IN_SOURCES)[number];
export type OptOutEventSource = (typeof OPT_OUT_EVENT_SOURCES)[number];
export type ConsentChannel = (typeof CONSENT_CHANNELS)[number];
export type ConsentPurpose = (typeof CONSENT_PURPOSES)[number];
export type ConsentStatus = (typeof CONSENT_STATUSES)[number];
export type ConsentSource = (typeof CONSENT_SOURCES)[number];

/** `col IN ('a','b',…)` for a CHECK constraint (literal values: CHECKs cannot take parameters). */
export function oneOf(column: AnyPgColumn, values: readonly string[]): SQL {
  return sql`${column} in (${sql.raw(values.map((v) => `'${v}'`).join(', '))})`;
}
// Defined with the browser-safe vocabularies: the inbox's webhook settings list them.
export { EVENT_TYPES, type EventType } from '../../server/shared/event-types';
/** Who made a change: a staff member (with staff_id), the client, the product, an API key, a provider. */
export const EVENT_ACTOR_TYPES = ['staff', 'client', 'system', 'api', 'provider'] as const;
export type EventActorType = (typeof EVENT_ACTOR_TYPES)[number];
