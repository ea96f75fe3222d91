import { and, eq } from 'drizzle-orm';
import { staff } from '@/db/schema';
import { db, type Tx } from '@/server/db/client';
import { AppError } from '@/server/errors';
import {
  DEFAULT_NOTIFICATION_PREFERENCES,
  KIND_CHANNELS,
  NOTIFICATION_CHANNELS,
  NOTIFICATION_KINDS,
  resolvePreferences,
  type NotificationPreferences,
  type StoredNotificationPreferences,
} from '@/server/shared/notifications';

/**
 * A staff member's notification choices (docs/api.md#notifications): what they get per kind and
 * channel. Stored as only what differs from the defaults, so a better default reaches everyone who
 * never chose.
 */

export async function notificationPreferences(
  businessId: number,
  staffId: number,
  tx: Tx = db,
): Promise<NotificationPreferences> {
  return resolvePreferences(await storedChoices(businessId, staffId, false, tx));
}

/** What is stored; `lock`: the row held until the transaction ends (a change reads, merges, writes). */
async function storedChoices(businessId: number, staffId: number, lock: boolean, tx: Tx) {
  const query = tx
    .select({ stored: staff.notificationPreferences })
    .from(staff)
    .where(and(eq(staff.businessId, businessId), eq(staff.id, staffId)));
  const [row] = lock ? await query.for('no key update') : await query;
  if (!row) throw AppError.notFound('Staff');
  return row.stored;
}

/** Only the choices that differ from the defaults (a channel a kind cannot use is never stored). */
function storedForm(choices: Partial<Record<string, Partial<Record<string, boolean>>>>): StoredNotificationPreferences {
  const out: StoredNotificationPreferences = {};
  for (const kind of NOTIFICATION_KINDS) {
    for (const channel of NOTIFICATION_CHANNELS) {
      const chosen = choices[kind]?.[channel];
      if (chosen === undefined || !KIND_CHANNELS[kind].includes(channel)) continue;
      if (chosen === DEFAULT_NOTIFICATION_PREFERENCES[kind][channel]) continue;
      out[kind] = { ...out[kind], [channel]: chosen };
    }
  }
  return out;
}

/**
 * Changes some choices (the rest stay as they were) and answers all of them. `choices` is checked
 * by the contract (server/schemas/notifications.ts) before it gets here. The staff row is held from
 * the read to the write: two changes at once both stay.
 */
export async function setNotificationPreferences(
  businessId: number,
  staffId: number,
  choices: Partial<Record<string, Partial<Record<string, boolean>>>>,
  tx: Tx = db,
): Promise<NotificationPreferences> {
  return tx.transaction(async (tx) => {
    const current = resolvePreferences(await storedChoices(businessId, staffId, true, tx));
    const merged: Record<string, Record<string, boolean>> = {};
    for (const kind of NOTIFICATION_KINDS) merged[kind] = { ...current[kind], ...choices[kind] };
    const stored = storedForm(merged);
    await tx
      .update(staff)
      .set({ notificationPreferences: Object.keys(stored).length ? stored : null, updatedAt: new Date() })
      .where(and(eq(staff.businessId, businessId), eq(staff.id, staffId)));
    return resolvePreferences(stored);
  });
}
