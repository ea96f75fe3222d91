import { z } from 'zod';
import { parseOrThrow } from '@/server/http/validation';
import { ReportQuery } from '@/server/schemas/reports';
import { listStaff } from '@/server/services/directory';
import { listLocations } from '@/server/services/locations';
import { businessOpeningHours } from '@/server/services/opening-hours';
import { getReport, seesEveryFigure } from '@/server/services/reports';
import { REPORTS } from '@/server/shared/reports';
import { staffProcedure } from '../../init';

/**
 * The Reports page (docs/api.md#reports), over the services REST uses. `query` is REST's query
 * string as an object of strings (`from`, `to`, `location_id`…), checked by REST's own contract, so
 * a refusal names the same field (`['query', 'to']`) and the page can build the CSV link from it.
 * The role rule is the service's: a staff member without owner or manager gets their own figures.
 */
/** REST's query string: only its parameters, each a short string (REST's contract then reads them). */
const reportQueryStrings = z.partialRecord(z.enum(ReportQuery.keyof().options), z.string().max(100));

export const reportProcedures = {
  /**
   * What the page's filters offer: the locations and, for those who see everyone's figures, the
   * staff; and the zone each reads its days in (the reports' own rule: a location's, else the
   * business's), so the page's range is days on the clock the report reads.
   */
  reportFilters: staffProcedure.query(async ({ ctx }) => {
    const { businessId } = ctx.caller;
    const everyone = await seesEveryFigure(ctx.caller, businessId);
    const [locations, staff, hours] = await Promise.all([
      listLocations(businessId),
      everyone ? listStaff(businessId, { page: 1, page_size: 200 }) : null,
      businessOpeningHours(businessId),
    ]);
    return {
      seesEveryone: everyone,
      timeZone: hours.forLocation(null).timeZone,
      locations: locations.map((l) => ({ id: l.location_id, name: l.name, timeZone: hours.forLocation(l.location_id).timeZone })),
      staff: staff ? staff.staffs.map((s) => ({ id: s.staff_id, name: s.staff_name, active: s.active })) : [],
    };
  }),
  report: staffProcedure
    .input(z.object({ report: z.enum(REPORTS), query: reportQueryStrings }))
    .query(({ ctx, input }) =>
      getReport(ctx.caller, ctx.caller.businessId, input.report, parseOrThrow('query', ReportQuery, input.query)),
    ),
};
