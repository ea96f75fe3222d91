import { and, eq, sql } from 'drizzle-orm';
import type { z } from 'zod';
import { businesses, locations, savedReplies } from '@/db/schema';
import { equalsAny } from '@/db/sql-array';
import { db, type Tx } from '@/server/db/client';
import { AppError, type ValidationIssue } from '@/server/errors';
import type { ReminderRules } from '@/server/schemas/appointments';
import { DEFAULT_REMINDER_RULES, durationSeconds, formatDuration, type ReminderRule } from '@/server/shared/appointments';

/**
 * Reminder rules (docs/api.md#reminder-rules): the business's (in its settings; absent: the
 * defaults, `[]`: none) and a location's own (null: the business's). Saved as given once checked:
 * each `before` once, exactly one of `text` and `saved_reply_id`, a saved reply of this business
 * usable on SMS. Changing rules changes the reminders written from then on (an appointment
 * upserted, moved or confirmed); reminders already scheduled keep theirs.
 */

type RulesInput = z.output<typeof ReminderRules>['rules'];

/** The rules as stored: `before` in its shortest spelling, both content fields present. */
async function checkedRules(businessId: number, input: RulesInput, tx: Tx): Promise<ReminderRule[]> {
  const issues: ValidationIssue[] = [];
  const seen = new Map<number, number>();
  input.forEach((r, i) => {
    const seconds = durationSeconds(r.before)!;
    const first = seen.get(seconds);
    if (first !== undefined) {
      issues.push({ loc: ['body', 'rules', i, 'before'], msg: `is the same as rule ${first}'s`, type: 'value_error' });
    }
    seen.set(seconds, i);
    if ((r.text === undefined) === (r.saved_reply_id === undefined)) {
      issues.push({ loc: ['body', 'rules', i, 'text'], msg: 'give exactly one of text and saved_reply_id', type: 'value_error' });
    }
  });
  const replyIds = [...new Set(input.flatMap((r) => (r.saved_reply_id === undefined ? [] : [r.saved_reply_id])))];
  if (replyIds.length) {
    const found = await tx
      .select({ id: savedReplies.id, channel: savedReplies.channel })
      .from(savedReplies)
      .where(and(eq(savedReplies.businessId, businessId), equalsAny(savedReplies.id, replyIds, 'int')));
    const byId = new Map(found.map((r) => [r.id, r]));
    input.forEach((r, i) => {
      if (r.saved_reply_id === undefined) return;
      const reply = byId.get(r.saved_reply_id);
      const msg = !reply
        ? `Saved reply ${r.saved_reply_id} not found in this business`
        : reply.channel === 'email'
          ? 'is an email-only saved reply; a reminder is a text'
          : null;
      if (msg) issues.push({ loc: ['body', 'rules', i, 'saved_reply_id'], msg, type: 'value_error' });
    });
  }
  if (issues.length) throw new AppError('validation', 'Invalid reminder rules', { issues });
  return input.map((r) => ({
    before: formatDuration(durationSeconds(r.before)!),
    text: r.text ?? null,
    saved_reply_id: r.saved_reply_id ?? null,
    asks_confirmation: r.asks_confirmation,
  }));
}

/** The business's rules, each location's own, and the defaults (GET …/reminder-rules). */
export async function reminderRules(businessId: number, tx: Tx = db) {
  const [business] = await tx.select({ settings: businesses.settings }).from(businesses).where(eq(businesses.id, businessId));
  if (!business) throw AppError.notFound('Business');
  const rows = await tx
    .select({ id: locations.id, rules: locations.reminderRules })
    .from(locations)
    .where(eq(locations.businessId, businessId))
    .orderBy(locations.id);
  const own = business.settings.reminder_rules;
  return {
    business_id: businessId,
    cancel_on_request: business.settings.cancel_on_request ?? false,
    rules: own ?? [...DEFAULT_REMINDER_RULES],
    source: own ? ('business' as const) : ('default' as const),
    default_rules: [...DEFAULT_REMINDER_RULES],
    locations: rows.map((l) => ({ location_id: l.id, rules: l.rules })),
  };
}

/**
 * Replaces the business's rules (`[]`: no reminders anywhere a location has none of its own), and
 * sets `cancel_on_request` when given (docs/api.md#replies-to-reminders).
 */
export async function setBusinessReminderRules(
  businessId: number,
  input: RulesInput,
  options: { cancelOnRequest?: boolean } = {},
  tx: Tx = db,
) {
  const rules = await checkedRules(businessId, input, tx);
  const { cancelOnRequest } = options;
  const cancel =
    cancelOnRequest === undefined ? sql`'{}'::jsonb` : sql`jsonb_build_object('cancel_on_request', ${cancelOnRequest}::boolean)`;
  await tx
    .update(businesses)
    .set({
      settings: sql`${businesses.settings} || jsonb_build_object('reminder_rules', ${JSON.stringify(rules)}::jsonb) || ${cancel}`,
      updatedAt: sql`now()`,
    })
    .where(eq(businesses.id, businessId));
  return reminderRules(businessId, tx);
}

/** Replaces a location's own rules (`[]`: none there), or removes them (null: the business's again). */
export async function setLocationReminderRules(businessId: number, locationId: number, input: RulesInput | null, tx: Tx = db) {
  const rules = input === null ? null : await checkedRules(businessId, input, tx);
  const [row] = await tx
    .update(locations)
    .set({ reminderRules: rules })
    .where(and(eq(locations.businessId, businessId), eq(locations.id, locationId)))
    .returning({ id: locations.id });
  if (!row) throw AppError.notFound('Location');
  return reminderRules(businessId, tx);
}

/** The rules that apply to an appointment at this location (null: none): its own, else the business's, else the defaults. */
export async function effectiveRules(businessId: number, locationId: number | null, tx: Tx = db): Promise<ReminderRule[]> {
  const [row] = await tx.execute<{ business_rules: ReminderRule[] | null; location_rules: ReminderRule[] | null }>(sql`
    select b.settings->'reminder_rules' as business_rules,
           ${locationId === null ? sql`null::jsonb` : sql`(select l.reminder_rules from locations l where l.business_id = b.id and l.id = ${locationId})`} as location_rules
    from businesses b where b.id = ${businessId}`);
  return row?.location_rules ?? row?.business_rules ?? [...DEFAULT_REMINDER_RULES];
}
