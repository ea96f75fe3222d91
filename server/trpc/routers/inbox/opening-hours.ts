import { z } from 'zod';
import { parseOrThrow } from '@/server/http/validation';
import { id } from '@/server/schemas/common';
import { OpeningHoursInput } from '@/server/schemas/opening-hours';
import { clearLocationOpeningHours, openingHoursSettings, setOpeningHours } from '@/server/services/opening-hours';
import { staffProcedure } from '../../init';

/** The Opening hours settings page (docs/api.md#opening-hours): the business's hours and each location's. */
export const openingHoursProcedures = {
  openingHours: staffProcedure.query(({ ctx }) => openingHoursSettings(ctx.caller.businessId)),
  /**
   * Replaces the business's (`locationId` null) or a location's own hours. The schedule is checked
   * here with REST's contract, so a refusal carries the same issues, each naming its place in the
   * schedule (`['body', 'weekly', 'friday', 1]`), for the page to put in words.
   */
  setOpeningHours: staffProcedure
    .input(z.object({ locationId: id.nullable(), hours: z.unknown() }))
    .mutation(({ ctx, input }) =>
      setOpeningHours(ctx.caller.businessId, input.locationId, parseOrThrow('body', OpeningHoursInput, input.hours)),
    ),
  clearLocationOpeningHours: staffProcedure
    .input(z.object({ locationId: id }))
    .mutation(({ ctx, input }) => clearLocationOpeningHours(ctx.caller.businessId, input.locationId)),
};
