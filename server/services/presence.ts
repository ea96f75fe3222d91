import { sql } from 'drizzle-orm';
import { db, type Tx } from '@/server/db/client';
import { AppError } from '@/server/errors';
import { PRESENCE_STATES, type PresenceBeatState } from '@/server/shared/presence';

/**
 * Presence beats (server/shared/presence.ts): a staff member says they have a conversation open, are
 * typing in it, or left it. Not a change of anything, so not an event of the log: one NOTIFY on
 * PRESENCE_CHANNEL that every web process LISTENs on (server/realtime/presence.ts) and fans out to
 * the streams of the business. Nothing is stored.
 */
export const PRESENCE_CHANNEL = 'inbox_presence';

/** One beat as it travels: `businessId,conversationId,staffId,state` (about 25 bytes). */
export type PresenceBeat = { businessId: number; conversationId: number; staffId: number; state: PresenceBeatState };

export const beatPayload = (b: PresenceBeat): string => `${b.businessId},${b.conversationId},${b.staffId},${b.state}`;

/** A payload back into a beat; null for anything that is not one (nothing else sends on the channel). */
export function parseBeat(payload: string): PresenceBeat | null {
  const [b, c, s, state, extra] = payload.split(',');
  const ids = [b, c, s].map(Number);
  if (extra !== undefined || !ids.every((n) => Number.isSafeInteger(n) && n > 0)) return null;
  if (!(PRESENCE_STATES as readonly string[]).includes(state!)) return null;
  return { businessId: ids[0]!, conversationId: ids[1]!, staffId: ids[2]!, state: state as PresenceBeatState };
}

/**
 * Announces a beat to every web process. Tenancy and the NOTIFY are one statement: the notification
 * is sent only when the conversation is the business's (a primary-key probe), else 404 as for any
 * conversation of another business. Autocommit: delivered at once, no transaction held.
 */
export async function announcePresence(beat: PresenceBeat, tx: Tx = db): Promise<void> {
  const rows = await tx.execute(sql`
    select pg_notify(${PRESENCE_CHANNEL}, ${beatPayload(beat)}) from conversations
    where id = ${beat.conversationId} and business_id = ${beat.businessId}`);
  if (rows.length === 0) throw AppError.notFound('Conversation');
}
