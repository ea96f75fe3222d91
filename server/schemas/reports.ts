import { z } from 'zod';
import { GROUP_BYS, MAX_REPORT_DAYS, MESSAGE_COUNTS, REPORT_CHANNELS, REPORTS, type ReportName } from '@/server/shared/reports';
import { idParam, isoTimestamp } from './common';

/** Reports (docs/api.md#reports): which one, over what range, narrowed and grouped how. */
export const reportPath = z.object({ business_id: idParam, report: z.enum(REPORTS) });

const DAY_MS = 86_400_000;

export const ReportQuery = z
  .object({
    from: isoTimestamp.describe('Start of the range (inclusive): an ISO 8601 date and time.'),
    to: isoTimestamp.describe(
      `End of the range (exclusive): after \`from\` and at most ${MAX_REPORT_DAYS} days later, else a 422 at \`to\`.`,
    ),
    location_id: idParam.optional(),
    staff_id: idParam
      .optional()
      .describe('Only this staff member’s figures; a staff session without the owner or manager role always gets its own.'),
    channel: z.enum(REPORT_CHANNELS).optional(),
    group_by: z.enum(GROUP_BYS).optional(),
  })
  .superRefine((q, ctx) => {
    const span = q.to.getTime() - q.from.getTime();
    if (!(span > 0)) ctx.addIssue({ code: 'custom', path: ['to'], message: 'must be after from' });
    else if (span > MAX_REPORT_DAYS * DAY_MS) {
      ctx.addIssue({ code: 'custom', path: ['to'], message: `the range may cover at most ${MAX_REPORT_DAYS} days` });
    }
  });

const seconds = (what: string) => z.number().min(0).nullable().describe(`${what}; null when nothing was counted.`);

/** One time figure (docs/api.md#reports, Definitions): PostgreSQL's `percentile_cont` over what was counted. */
const ReportStats = z.strictObject({
  count: z.number().int().min(0).describe('How many were counted.'),
  median_seconds: seconds('Median, in wall-clock seconds'),
  p90_seconds: seconds('90th percentile, in wall-clock seconds'),
  median_business_seconds: seconds('Median, in seconds the location was open'),
  p90_business_seconds: seconds('90th percentile, in seconds the location was open'),
});

const count = (description: string) => z.number().int().min(0).describe(description);

/** Each report's figures, the same in `total` and in every group. */
const FIGURES = {
  'response-times': {
    first_response: ReportStats.describe('The cycle’s first client message → its first reply (dated at the cycle’s start).'),
    reply: ReportStats.describe('The client’s first unanswered message → the next reply (dated at that message).'),
    resolution: ReportStats.describe('The cycle’s first client message → its resolution (dated at the cycle’s start).'),
  },
  volume: {
    conversations_opened: count('Cycles started in the range (none with `staff_id`).'),
    conversations_resolved: count('Cycles resolved in the range (with `staff_id`: by them).'),
    messages: z
      .strictObject(
        Object.fromEntries(MESSAGE_COUNTS.map((n) => [n, count(n.replace('_', ' '))])) as Record<
          (typeof MESSAGE_COUNTS)[number],
          ReturnType<typeof count>
        >,
      )
      .describe(
        'Messages in and out per channel; notes, scheduled and canceled ones are not counted (with `staff_id`: what they sent).',
      ),
  },
  calls: {
    calls: count('Missed calls and voicemails.'),
    missed: count('Missed calls (no voicemail).'),
    voicemails: count('Voicemails left.'),
    called_back: count('Answered by a call placed by staff.'),
    texted: count('Answered by a text or an email.'),
    time_to_answer: ReportStats.describe('The call → its answer, for those answered.'),
  },
  deliverability: {
    failures: z
      .array(
        z.strictObject({
          reason: z.string().nullable().describe('The `error_code`; null: none given.'),
          count: count('Failures.'),
        }),
      )
      .describe('Our texts and emails that ended failed, undelivered or bounced, per reason.'),
    opt_outs: z
      .array(z.strictObject({ channel: z.enum(REPORT_CHANNELS), count: count('Opt-outs.') }))
      .describe('Opt-outs by the client, per channel (none with `staff_id` or `location_id`).'),
  },
} satisfies Record<ReportName, z.ZodRawShape>;

const GroupKey = z
  .union([z.string(), z.number().int()])
  .nullable()
  .describe('The group: a day or the Monday of a week as `YYYY-MM-DD`, a staff or location id, a channel; null: none.');

/** One report's answer: `report` names it, and its figures are those of FIGURES (strict: nothing undocumented). */
function reportResponse<R extends ReportName>(report: R, id: string) {
  const figures = FIGURES[report];
  return z
    .strictObject({
      report: z.literal(report),
      business_id: z.number().int(),
      from: z.string().describe('The range’s start, as given (ISO 8601, UTC).'),
      to: z.string().describe('The range’s end, as given (ISO 8601, UTC).'),
      time_zone: z
        .string()
        .describe('The zone days and weeks are read in: the location’s with `location_id`, else the business’s.'),
      group_by: z.enum(GROUP_BYS).nullable(),
      total: z.strictObject(figures),
      groups: z
        .array(z.strictObject({ key: GroupKey, ...figures }))
        .describe('One entry per group with figures, in key order (null last); `[]` without `group_by`.'),
    })
    .meta({ id });
}

/** A report's answer (docs/api.md#reports): one schema per report, told apart by `report`. */
export const ReportResponse = z
  .discriminatedUnion('report', [
    reportResponse('response-times', 'ResponseTimesReport'),
    reportResponse('volume', 'VolumeReport'),
    reportResponse('calls', 'CallsReport'),
    reportResponse('deliverability', 'DeliverabilityReport'),
  ])
  .meta({ id: 'ReportResponse' });
