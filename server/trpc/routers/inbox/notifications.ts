import { z } from 'zod';
import { parseOrThrow } from '@/server/http/validation';
import { id } from '@/server/schemas/common';
import { SetNotificationPreferencesBody, UnknownNotificationKinds } from '@/server/schemas/notifications';
import { notificationPreferences, setNotificationPreferences } from '@/server/services/notifications/preferences';
import { bell, markNotificationsRead } from '@/server/services/notifications/read';
import { MAX_BELL_PAGE, preferencesOut } from '@/server/shared/notifications';
import { staffProcedure } from '../../init';

/**
 * The signed-in staff member's notifications (docs/api.md#notifications): the bell's list and
 * unread count (the stream's `notification` frame refetches them), marking read, and their choices
 * (the Notifications settings page; REST's contract, so a refusal names the same field).
 */
export const notificationProcedures = {
  notifications: staffProcedure
    .input(
      z.object({
        limit: z.number().int().min(1).max(MAX_BELL_PAGE).optional(),
        before: id.optional(),
      }),
    )
    .query(({ ctx, input }) => bell(ctx.caller.businessId, ctx.caller.staffId, input)),
  markNotificationsRead: staffProcedure
    .input(z.union([z.object({ id }), z.object({ all: z.literal(true) })]))
    .mutation(({ ctx, input }) =>
      markNotificationsRead(ctx.caller.businessId, ctx.caller.staffId, 'id' in input ? { id: input.id } : 'all'),
    ),
  notificationPreferences: staffProcedure.query(async ({ ctx }) =>
    preferencesOut(await notificationPreferences(ctx.caller.businessId, ctx.caller.staffId)),
  ),
  // Parsed here by REST's body schema, so a refusal is REST's: UNPROCESSABLE_CONTENT at the same `loc`.
  setNotificationPreferences: staffProcedure.input(z.object({ preferences: z.unknown() })).mutation(async ({ ctx, input }) => {
    const { preferences } = parseOrThrow('body', SetNotificationPreferencesBody, input, UnknownNotificationKinds);
    return preferencesOut(await setNotificationPreferences(ctx.caller.businessId, ctx.caller.staffId, preferences));
  }),
};
