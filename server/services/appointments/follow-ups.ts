import type { Tx } from '@/server/db/client';
import type { AppointmentStatus } from '@/server/shared/appointments';
import type { AppointmentRow } from './read';
import { syncReminders, type SyncOptions } from './reminders';
import { syncReviewRequest } from './review-requests';

/**
 * What every write of an appointment (created, updated, confirmed, canceled: upsert.ts, outcomes.ts)
 * does to the messages that follow from it, in the write's transaction, so no path that changes an
 * appointment's status can forget one: its reminders (docs/api.md#reminders) and its review request
 * (docs/api.md#review-requests).
 */
export async function syncAppointmentMessages(
  a: AppointmentRow,
  /** Its status before the write; null when the write created it. */
  previousStatus: AppointmentStatus | null,
  options: SyncOptions,
  tx: Tx,
): Promise<void> {
  await syncReminders(a, options, tx);
  await syncReviewRequest(a, previousStatus, options, tx);
}
