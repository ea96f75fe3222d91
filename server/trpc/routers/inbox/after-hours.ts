import { z } from 'zod';
import { AfterHoursReplyInput, Locale } from '@/server/schemas/after-hours';
import { afterHoursSettings, setAfterHoursReply, setLocale } from '@/server/services/after-hours/settings';
import { staffProcedure } from '../../init';

/** The After-hours answer settings page (docs/api.md#after-hours-answer): the texts, the locale, what the preview renders. */
export const afterHoursProcedures = {
  afterHoursReply: staffProcedure.query(({ ctx }) => afterHoursSettings(ctx.caller.businessId)),
  setAfterHoursReply: staffProcedure
    .input(AfterHoursReplyInput)
    .mutation(({ ctx, input }) => setAfterHoursReply(ctx.caller.businessId, input.locationId, input.text)),
  setLocale: staffProcedure
    .input(z.object({ locale: Locale }))
    .mutation(({ ctx, input }) => setLocale(ctx.caller.businessId, input.locale)),
};
