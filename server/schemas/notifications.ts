import { z } from 'zod';
import { NOTIFICATION_KIND_DESCRIPTIONS as KIND_DESCRIPTION, type NotificationKind } from '@/server/shared/notifications';

/**
 * Notification preferences over REST and in the inbox (docs/api.md#notifications): per kind, the
 * channels it may use. A kind accepts only its own channels (the waiting digest is email only), so
 * asking for another is a 422 at that key.
 */

const AllChannels = z.strictObject({ in_app: z.boolean(), browser: z.boolean(), email: z.boolean() });
const EmailOnly = z.strictObject({ email: z.boolean() });
const shapeOf = <T extends z.ZodType, U extends z.ZodType>(all: T, emailOnly: U) => {
  const d = (k: NotificationKind) => ({ description: KIND_DESCRIPTION[k] });
  return {
    unassigned_waiting: all.meta(d('unassigned_waiting')),
    client_replied: all.meta(d('client_replied')),
    assigned: all.meta(d('assigned')),
    mentioned: all.meta(d('mentioned')),
    missed_call: all.meta(d('missed_call')),
    webhook_disabled: all.meta(d('webhook_disabled')),
    waiting_digest: emailOnly.meta(d('waiting_digest')),
  } satisfies Record<NotificationKind, z.ZodType>;
};

const NotificationPreferencesOut = z.object(shapeOf(AllChannels, EmailOnly)).meta({ id: 'NotificationPreferences' });

export const NotificationPreferencesResponse = z
  .object({
    business_id: z.number().int(),
    staff_id: z.number().int(),
    preferences: NotificationPreferencesOut,
  })
  .meta({ id: 'NotificationPreferencesResponse' });

const changeShape = shapeOf(AllChannels.partial().optional(), EmailOnly.partial().optional());

const NotificationPreferencesChange = z
  .strictObject(changeShape)
  .meta({ id: 'NotificationPreferencesChange', description: 'Only what changes: a kind or channel left out keeps its value' });

/** The body as documented (OpenAPI): no kind but the known ones. */
export const SetNotificationPreferencesRequest = z
  .strictObject({ preferences: NotificationPreferencesChange })
  .meta({ id: 'SetNotificationPreferencesRequest' });

/**
 * The body as parsed (REST and the inbox, with UnknownNotificationKinds beside it): zod names an
 * unknown key of a strict object at the object (`["body","preferences"]`), so the kinds are checked
 * apart, each unknown one at its own key (`["body","preferences","nope"]`), in the same 422.
 */
export const SetNotificationPreferencesBody = z.strictObject({ preferences: z.object(changeShape) });

const KINDS = new Set<string>(Object.keys(changeShape));
export const UnknownNotificationKinds = z.unknown().superRefine((body, ctx) => {
  const preferences = (body as { preferences?: unknown } | null)?.preferences;
  if (typeof preferences !== 'object' || preferences === null || Array.isArray(preferences)) return;
  for (const key of Object.keys(preferences))
    if (!KINDS.has(key)) ctx.addIssue({ code: 'custom', path: ['preferences', key], message: 'is not a notification kind' });
});
