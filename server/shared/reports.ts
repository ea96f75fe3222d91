/**
 * The reports' names and choices (docs/api.md#reports): pure, so the contract, the service and the
 * Reports page name the same ones.
 */
export const REPORTS = ['response-times', 'volume', 'calls', 'deliverability'] as const;
export type ReportName = (typeof REPORTS)[number];
export const GROUP_BYS = ['day', 'week', 'staff', 'location', 'channel'] as const;
export type GroupBy = (typeof GROUP_BYS)[number];
export const REPORT_CHANNELS = ['sms', 'email'] as const;

/** The longest range a report or an export covers, in days: past it, a 422 at `to` (the contract's). */
export const MAX_REPORT_DAYS = 366;

/** One time figure: how many were counted, their median and 90th percentile, in wall and business seconds (null: none counted). */
export type Stats = {
  count: number;
  median_seconds: number | null;
  p90_seconds: number | null;
  median_business_seconds: number | null;
  p90_business_seconds: number | null;
};

/** The volume report's message counts: in and out per channel. */
export const MESSAGE_COUNTS = ['sms_in', 'sms_out', 'email_in', 'email_out', 'voice_in', 'voice_out'] as const;
