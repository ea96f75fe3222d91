import { sql } from 'drizzle-orm';
import { db, type Tx } from '@/server/db/client';
import type { BusinessSettings } from '@/db/schema/businesses';
import { env } from '@/server/env';
import type { Logger } from '@/server/logger';
import type { EmailProvider } from '@/server/providers/types';
import { waitingForReply } from '@/server/services/conversations/waiting';
import { businessOpeningHours } from '@/server/services/opening-hours';
import { staffAvailability } from '@/server/services/staff-availability';
import {
  DEFAULT_WAITING_DIGEST_MINUTES,
  resolvePreferences,
  type StoredNotificationPreferences,
} from '@/server/shared/notifications';
import { locationClocks, type LocationClocks } from '@/server/shared/location-clocks';
import { sendStaffMail } from './email';
import { digestMail, type DigestItem } from './mail';

/**
 * The waiting digest (docs/api.md#email-notifications-and-the-waiting-digest): during opening hours,
 * an email to each available staff member listing the conversations waiting for a reply longer than
 * the business's `waiting_digest_minutes`, counted in business minutes. The worker runs it every
 * five minutes; tests pass their own `now`.
 *
 * The rules, stated once:
 * - A business with `waiting_digest_minutes` null has none (absent: 60). Its digests go only while
 *   it is open by its own clock (the business's opening hours).
 * - A conversation's waiting is counted on its own hours: its location's when the location has its
 *   own, else the business's (server/services/opening-hours.ts `forLocation`); only the time those
 *   were open since `waiting_since` counts. A conversation whose hours are closed now is not listed
 *   (its waiting is not growing, and nobody there is on shift).
 * - The recipients: active staff who are available now (not away, on shift), have an email address
 *   and the `waiting_digest` email choice on. Each is sent the conversations assigned to them, and
 *   those nobody holds where they work (their location's, or of no location; staff of no location
 *   work everywhere).
 * - Never the same waiting twice: a conversation listed in a digest to them sent at or after its
 *   `waiting_since` is left out (a reply ends the waiting; the client's next text starts a new one).
 * - At most one digest per staff member per hour; none when the list is empty.
 * - At most once: the digest's row (notification_digests, the conversations it lists) is committed
 *   before the mail goes, under a per-staff advisory lock that workers side by side skip.
 */

/** One digest per staff member at most this often. */
const DIGEST_INTERVAL_MS = 60 * 60_000;
/** The most conversations one digest lists (the longest waiting first). */
export const MAX_DIGEST_ITEMS = 50;

type Waiting = {
  id: number;
  assigned_staff_id: number | null;
  location_id: number | null;
  waiting_since: Date;
  label: string;
};

type Recipient = { staffId: number; locationId: number | null; email: string };

/** The digest threshold of a business's settings, in business minutes; null: no digest. */
export function digestThreshold(settings: BusinessSettings): number | null {
  if (!('waiting_digest_minutes' in settings)) return DEFAULT_WAITING_DIGEST_MINUTES;
  return settings.waiting_digest_minutes ?? null;
}

/** The conversations over the threshold now, with their business minutes of waiting, longest first. */
function overThreshold(
  waiting: readonly Waiting[],
  clockOf: LocationClocks,
  thresholdMinutes: number,
  now: Date,
): (Waiting & { minutes: number })[] {
  const out: (Waiting & { minutes: number })[] = [];
  for (const c of waiting) {
    const clock = clockOf(c.location_id);
    if (!clock.isOpen(now)) continue;
    const minutes = clock.businessSeconds(new Date(c.waiting_since), now) / 60;
    if (minutes >= thresholdMinutes) out.push({ ...c, minutes });
  }
  return out.sort((a, b) => b.minutes - a.minutes || a.id - b.id);
}

/** Claims one staff member's digest: the row written (or nothing, when not due or nothing new), committed. */
async function claimDigest(
  businessId: number,
  who: Recipient,
  candidates: (Waiting & { minutes: number })[],
  now: Date,
  tx: Tx,
): Promise<{ id: number; items: (Waiting & { minutes: number })[] } | null> {
  return tx.transaction(async (tx) => {
    const [lock] = await tx.execute<{ taken: boolean }>(
      sql`select pg_try_advisory_xact_lock(${businessId}, hashtext(${`waiting-digest:${who.staffId}`})) as taken`,
    );
    if (!lock?.taken) return null;
    const since = new Date(
      Math.min(...candidates.map((c) => new Date(c.waiting_since).getTime()), now.getTime() - DIGEST_INTERVAL_MS),
    );
    const sent = await tx.execute<{ sent_at: Date; conversation_ids: number[] }>(sql`
      select sent_at, conversation_ids from notification_digests
      where business_id = ${businessId} and staff_id = ${who.staffId} and sent_at >= ${since.toISOString()}::timestamptz`);
    if (sent.some((d) => new Date(d.sent_at).getTime() > now.getTime() - DIGEST_INTERVAL_MS)) return null;
    const items = candidates
      .filter(
        (c) =>
          !sent.some(
            (d) => new Date(d.sent_at).getTime() >= new Date(c.waiting_since).getTime() && d.conversation_ids.includes(c.id),
          ),
      )
      .slice(0, MAX_DIGEST_ITEMS);
    if (items.length === 0) return null;
    const [row] = await tx.execute<{ id: number }>(sql`
      insert into notification_digests (business_id, staff_id, conversation_ids, sent_at, email_detail)
      values (${businessId}, ${who.staffId}, ${sql.param(items.map((c) => c.id))}::int[], ${now.toISOString()}::timestamptz, 'sending')
      returning id`);
    return { id: row!.id, items };
  });
}

/** One business's digests at `now`; answers how many went. */
async function businessDigests(
  b: { id: number; name: string; threshold: number },
  provider: EmailProvider,
  now: Date,
  log: Logger | undefined,
  tx: Tx,
): Promise<number> {
  const clockOf = locationClocks((await businessOpeningHours(b.id, tx)).forLocation);
  if (!clockOf(null).isOpen(now)) return 0;
  // Business minutes never exceed wall minutes: what waited less on the wall clock cannot be over.
  const waitedEnough = new Date(now.getTime() - b.threshold * 60_000);
  const [waiting, availability, people] = await Promise.all([
    tx.execute<Waiting>(sql`
      select c.id, c.assigned_staff_id, c.location_id, c.waiting_since,
             coalesce(nullif(btrim(cl.name), ''), cl.phone_number, cl.email, 'A client') as label
      from conversations c left join clients cl on cl.business_id = c.business_id and cl.id = c.client_id
      where c.business_id = ${b.id} and ${waitingForReply()} and c.waiting_since <= ${waitedEnough.toISOString()}::timestamptz
      order by c.waiting_since limit 5000`),
    staffAvailability(b.id, now, tx),
    tx.execute<{ id: number; email: string | null; preferences: StoredNotificationPreferences | null }>(sql`
      select id, email, notification_preferences as preferences from staff where business_id = ${b.id} and active`),
  ]);
  const over = overThreshold(waiting, clockOf, b.threshold, now);
  if (over.length === 0) return 0;
  const byId = new Map(people.map((p) => [p.id, p]));
  const recipients: Recipient[] = availability.flatMap((a) => {
    const p = byId.get(a.staffId);
    const email = p?.email?.trim();
    if (!a.available || !p || !email || !resolvePreferences(p.preferences).waiting_digest.email) return [];
    return [{ staffId: a.staffId, locationId: a.locationId, email }];
  });
  let sent = 0;
  for (const who of recipients) {
    const theirs = over.filter((c) =>
      c.assigned_staff_id === null
        ? c.location_id === null || who.locationId === null || who.locationId === c.location_id
        : c.assigned_staff_id === who.staffId,
    );
    if (theirs.length === 0) continue;
    const claimed = await claimDigest(b.id, who, theirs, now, tx);
    if (!claimed) continue;
    const items: DigestItem[] = claimed.items.map((c) => ({
      conversationId: c.id,
      clientLabel: c.label,
      waitingMinutes: c.minutes,
      mine: c.assigned_staff_id !== null,
    }));
    const mail = digestMail({ businessName: b.name, items, thresholdMinutes: b.threshold, baseUrl: env().publicBaseUrl });
    const { ok, detail, error } = await sendStaffMail(
      provider,
      { businessId: b.id, businessName: b.name, address: who.email },
      mail,
    );
    if (ok) sent++;
    else log?.warn({ digestId: claimed.id, err: error }, 'waiting digest failed');
    await tx.execute(sql`update notification_digests set email_detail = ${detail} where id = ${claimed.id}`);
  }
  return sent;
}

/** Every business's waiting digests at `now`; answers how many went. */
export async function sendWaitingDigests(
  provider: EmailProvider,
  now: Date = new Date(),
  opts: { log?: Logger } = {},
  tx: Tx = db,
): Promise<number> {
  // Businesses with the digest on and a conversation waiting at least the threshold on the wall clock.
  const candidates = await tx.execute<{ id: number; name: string; settings: BusinessSettings }>(sql`
    select b.id, b.name, b.settings from businesses b
    where b.settings->'waiting_digest_minutes' is distinct from 'null'::jsonb
      and exists (
        select 1 from conversations c
        where c.business_id = b.id and ${waitingForReply()}
          and c.waiting_since <= ${now.toISOString()}::timestamptz
            - make_interval(mins => coalesce((b.settings->>'waiting_digest_minutes')::int, ${DEFAULT_WAITING_DIGEST_MINUTES})))
    order by b.id`);
  let sent = 0;
  let failure: unknown = null;
  for (const b of candidates) {
    const threshold = digestThreshold(b.settings);
    if (threshold === null) continue;
    try {
      sent += await businessDigests({ id: b.id, name: b.name, threshold }, provider, now, opts.log, tx);
    } catch (err) {
      // One business's failure does not keep the others' digests back; the sweep reports it after.
      opts.log?.error({ businessId: b.id, err }, 'waiting digest of a business failed');
      failure ??= err;
    }
  }
  if (failure) throw failure;
  return sent;
}
