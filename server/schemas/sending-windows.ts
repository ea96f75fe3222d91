import { z } from 'zod';
import { clockOf, minutesOf } from '@/server/shared/quiet-hours';
import { idParam } from './common';

/**
 * Quiet hours settings (docs/api.md#quiet-hours): a sending window as local clock times, "08:00" to
 * "21:00". The end is exclusive and may be "24:00"; the window lies within one day (start < end).
 */
const clock = (what: string) =>
  z
    .string()
    .max(5)
    .refine((v) => minutesOf(v) !== null, 'must be a time of day, HH:MM (00:00–24:00)')
    .meta({ description: `${what}, local time HH:MM`, example: what === 'Start' ? '08:00' : '21:00' });

export const SendingWindowInput = z
  .object({ start: clock('Start'), end: clock('End (exclusive)') })
  .superRefine((w, ctx) => {
    const start = minutesOf(w.start);
    const end = minutesOf(w.end);
    if (start !== null && end !== null && end <= start) {
      ctx.addIssue({ code: 'custom', path: ['end'], message: 'must be later than start (the window lies within one day)' });
    }
  })
  .transform((w) => ({ start: minutesOf(w.start)!, end: minutesOf(w.end)! }))
  .meta({ id: 'SendingWindowInput' });

export const SendingWindowOut = z
  .object({ start: z.string().meta({ example: '08:00' }), end: z.string().meta({ example: '21:00' }) })
  .meta({ id: 'SendingWindow' });

export const sendingWindowOut = (w: { start: number; end: number }) => ({ start: clockOf(w.start), end: clockOf(w.end) });

/** A location's own window as stored (both columns or neither), or null: the business's. */
export const locationWindowOut = (l: { sendingWindowStart: number | null; sendingWindowEnd: number | null }) =>
  l.sendingWindowStart !== null && l.sendingWindowEnd !== null
    ? sendingWindowOut({ start: l.sendingWindowStart, end: l.sendingWindowEnd })
    : null;

export const SendingWindowSettings = z
  .object({
    time_zone: z.string().meta({ description: "The business's IANA time zone" }),
    sending_window: SendingWindowOut.meta({ description: "The business's window; a location without its own keeps to it" }),
    locations: z.array(
      z.object({
        location_id: z.number().int(),
        name: z.string(),
        timezone: z.string().nullable(),
        sending_window: SendingWindowOut.nullable().meta({ description: "The location's own window; null: the business's" }),
      }),
    ),
    presets: z.array(
      z.object({
        id: z.string(),
        name: z.string(),
        start: z.string(),
        end: z.string(),
        source: z.string().meta({ description: 'The rule the preset follows' }),
      }),
    ),
  })
  .meta({ id: 'SendingWindowSettings' });

export const locationPath = z.object({ business_id: idParam, location_id: idParam });
