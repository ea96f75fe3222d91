import { sql } from 'drizzle-orm';
import { db, type Tx } from '@/server/db/client';
import type { Caller } from '@/server/services/auth';
import { scopedQuery } from './access';
import { reportScope, type ReportQuery } from './read';

/** The export's columns, in order: one row per cycle (docs/api.md#reports, Export). */
export const EXPORT_COLUMNS = [
  'conversation_id',
  'location_id',
  'channel',
  'started_at',
  'client_messages',
  'replies',
  'first_reply_at',
  'first_reply_staff_id',
  'first_response_seconds',
  'first_response_business_seconds',
  'reply_median_seconds',
  'reply_median_business_seconds',
  'reply_max_seconds',
  'resolved_at',
  'resolved_by_staff_id',
  'resolution_seconds',
  'resolution_business_seconds',
] as const;

/** A CSV field (RFC 4180): quoted when it holds a comma, a quote or a line break, quotes doubled. */
export function csvField(value: unknown): string {
  if (value === null || value === undefined) return '';
  const s = value instanceof Date ? value.toISOString() : String(value);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** Rows read per page of the export. */
export const EXPORT_PAGE_ROWS = 500;

/**
 * Where the last page ended: its last cycle's start, at the database's own precision (microseconds:
 * a JavaScript Date would round them off and read that cycle again), and its start message.
 */
type After = { startedAt: string; startMessageId: number };

type CycleRow = Record<(typeof EXPORT_COLUMNS)[number], unknown> & { after_started_at: string; start_message_id: number };

/**
 * The cycles of the range in pages of EXPORT_PAGE_ROWS, in (started_at, start_message_id) order, one
 * short statement per page on a pooled connection (none is held between pages): each page starts
 * after the last row of the one before (keyset). The key is what a cycle is — where it starts — not
 * its row id: a recount deletes and writes again the cycles it counts (new ids, same start), so
 * while the export runs a cycle is read once, in its place, whether it was recounted before or after
 * its page was read (a cycle starts at one client message: the key is unique). On the pool (`tx`
 * left to `db`) nothing is held between pages; in a transaction, that transaction is.
 */
export async function* cyclePages(businessId: number, q: ReportQuery, tx: Tx = db): AsyncGenerator<CycleRow[]> {
  let after: After | null = null;
  for (;;) {
    const rows: CycleRow[] = await tx.execute<CycleRow>(sql`
      select c.conversation_id, c.location_id, c.channel, c.started_at, c.client_messages, c.replies, c.first_reply_at,
        c.first_reply_staff_id, c.first_response_seconds, c.first_response_business_seconds,
        r.median_seconds as reply_median_seconds, r.median_business_seconds as reply_median_business_seconds,
        r.max_seconds as reply_max_seconds, c.resolved_at, c.resolved_by_staff_id, c.resolution_seconds,
        c.resolution_business_seconds, c.started_at::text as after_started_at, c.start_message_id
      from report_cycles c
      left join lateral (
        select percentile_cont(0.5) within group (order by x.seconds) as median_seconds,
          percentile_cont(0.5) within group (order by x.business_seconds) as median_business_seconds,
          max(x.seconds) as max_seconds
        from report_replies x where x.cycle_id = c.id
      ) r on true
      where c.business_id = ${businessId} and c.started_at >= ${q.from.toISOString()}::timestamptz
        and c.started_at < ${q.to.toISOString()}::timestamptz
        ${q.location_id !== undefined ? sql`and c.location_id = ${q.location_id}` : sql``}
        ${q.channel !== undefined ? sql`and c.channel = ${q.channel}` : sql``}
        ${q.staff_id !== undefined ? sql`and (c.first_reply_staff_id = ${q.staff_id} or c.resolved_by_staff_id = ${q.staff_id})` : sql``}
        ${
          after
            ? // The first condition alone is the index's range; the row comparison cuts the ties at the page's end.
              sql`and c.started_at >= ${after.startedAt}::timestamptz
                and (c.started_at, c.start_message_id) > (${after.startedAt}::timestamptz, ${after.startMessageId})`
            : sql``
        }
      order by c.started_at, c.start_message_id
      limit ${EXPORT_PAGE_ROWS}`);
    if (rows.length > 0) yield rows;
    if (rows.length < EXPORT_PAGE_ROWS) return;
    const last: CycleRow = rows[rows.length - 1]!;
    after = { startedAt: last.after_started_at, startMessageId: Number(last.start_message_id) };
  }
}

/**
 * The export as a stream of CSV lines (docs/api.md#reports, Export): the header, then a page of
 * cycles each time the client reads (highWaterMark 0: nothing is read ahead of the client), so memory
 * stays flat whatever the range and the first rows leave before the last are read. `staff_id`: the
 * cycles the staff member answered first or resolved.
 */
export async function exportCycles(caller: Caller, businessId: number, query: ReportQuery): Promise<ReadableStream<Uint8Array>> {
  const q = await scopedQuery(caller, businessId, query);
  await reportScope(businessId, q);
  const pages = cyclePages(businessId, q);
  const encoder = new TextEncoder();
  let header = true;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        if (header) {
          header = false;
          controller.enqueue(encoder.encode(`${EXPORT_COLUMNS.join(',')}\r\n`));
          return;
        }
        try {
          const next = await pages.next();
          if (next.done) return controller.close();
          controller.enqueue(
            encoder.encode(next.value.map((r) => `${EXPORT_COLUMNS.map((c) => csvField(r[c])).join(',')}\r\n`).join('')),
          );
        } catch (err) {
          controller.error(err);
        }
      },
      async cancel() {
        await pages.return(undefined);
      },
    },
    { highWaterMark: 0 },
  );
}
