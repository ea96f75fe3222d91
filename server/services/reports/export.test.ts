import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db } from '@/server/db/client';
import { createClient, createConversation } from '@/server/testing/factories';
import { api, restTenant, type RestTenant } from '@/server/testing/http';
import { EXPORT_COLUMNS, EXPORT_PAGE_ROWS } from './export';

/**
 * The CSV export's pages (docs/api.md#reports, Export): read in keyset pages of EXPORT_PAGE_ROWS,
 * each page one short statement, in (started_at, start_message_id) order. Cycles are written
 * straight into report_cycles with `client_messages` numbering them, so the CSV says which cycle
 * each line is; starts come in runs of equal instants (a run straddles each page boundary) and
 * carry microseconds (which a JavaScript Date would round off), and neither start messages nor row
 * ids run in the export's order.
 */

const range = 'from=2026-01-01T00:00:00Z&to=2026-12-31T00:00:00Z';
const N = 1234; // two full pages and a part
const RUN = 7; // cycles per start instant: 500 and 1000 fall inside a run
const BASE = '2026-06-01T00:00:00.000001Z';

/** Cycle `g` (0…N-1): starts RUN to a second, each start with microseconds; its start message is a permutation of g. */
const startSecond = (g: number) => Math.floor(g / RUN);
const startMessage = (g: number) => (g * 7919) % 100_003;
/** Cycle g's start, in microseconds past BASE (as seeded: its second, then 0, 2 or 4 µs). */
const micros = (g: number) => startSecond(g) * 1_000_000 + (g % 3) * 2;

async function seedCycles(t: RestTenant) {
  const client = await createClient(t.business.id);
  const conv = await createConversation(t.business.id, client.id);
  // Inserted in reverse, so row ids run against the export's order too.
  await db.execute(sql`
    insert into report_cycles (business_id, conversation_id, channel, start_message_id, started_at, client_messages, replies)
    select ${t.business.id}, ${conv.id}, 'sms', (g * 7919) % 100003,
      ${BASE}::timestamptz + make_interval(secs => g / ${RUN}) + make_interval(secs => (g % 3) * 0.000002),
      g, 0
    from generate_series(${N - 1}, 0, -1) g`);
  return conv;
}

/** The order the export promises: by start (to the microsecond), then start message. */
function expectedOrder(cycles: number[]): number[] {
  return [...cycles].sort((a, b) => micros(a) - micros(b) || startMessage(a) - startMessage(b));
}

/** The cycles of CSV lines (their `client_messages`). */
const cyclesOf = (text: string) =>
  text
    .split('\r\n')
    .filter(Boolean)
    .map((line) => Number(line.split(',')[EXPORT_COLUMNS.indexOf('client_messages')]));

async function open(t: RestTenant) {
  const res = await api.get(`${t.base}/reports/export?${range}`, { headers: t.key });
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  const read = async () => {
    const { done, value } = await reader.read();
    return done ? null : new TextDecoder().decode(value);
  };
  expect(await read()).toBe(`${EXPORT_COLUMNS.join(',')}\r\n`);
  return { read, reader };
}

/** A recount's way with a cycle: deleted and written again, same figures, a new row id. */
const recount = (businessId: number, cycle: number) =>
  db.transaction(async (tx) => {
    const [row] = await tx.execute<{ id: number }>(
      sql`select id from report_cycles where business_id = ${businessId} and client_messages = ${cycle}`,
    );
    await tx.execute(sql`
      insert into report_cycles (business_id, conversation_id, channel, start_message_id, started_at, client_messages, replies)
      select business_id, conversation_id, channel, start_message_id, started_at, client_messages, replies
      from report_cycles where id = ${row!.id}`);
    await tx.execute(sql`delete from report_cycles where id = ${row!.id}`);
  });

describe('the CSV export, page by page', () => {
  it('reads every cycle once, in order, across page boundaries inside runs of equal starts', async () => {
    const t = await restTenant();
    await seedCycles(t);
    const { read } = await open(t);
    const pages: number[][] = [];
    for (let page = await read(); page !== null; page = await read()) pages.push(cyclesOf(page));
    expect(pages.map((p) => p.length)).toEqual([EXPORT_PAGE_ROWS, EXPORT_PAGE_ROWS, N - 2 * EXPORT_PAGE_ROWS]);
    // The first boundary falls inside a run: the last line of page 1 and the first of page 2 start at one instant.
    const expected = expectedOrder([...Array(N).keys()]);
    expect(micros(expected[EXPORT_PAGE_ROWS - 1]!)).toBe(micros(expected[EXPORT_PAGE_ROWS]!));
    expect(pages.flat()).toEqual(expected);
  });

  it('holds no connection between pages, and misses or repeats nothing while cycles are recounted, added and removed', async () => {
    const t = await restTenant();
    const conv = await seedCycles(t);
    const { read } = await open(t);
    const first = cyclesOf((await read())!);
    expect(first).toHaveLength(EXPORT_PAGE_ROWS);

    // Between two reads the export holds nothing: no statement, no transaction, no portal.
    const busy = await db.execute<{ state: string; query: string }>(sql`
      select state, query from pg_stat_activity
      where datname = current_database() and pid <> pg_backend_pid() and (state <> 'idle' or xact_start is not null)`);
    expect(busy).toEqual([]);

    // While the client reads, the reports handler recounts: the last cycle of the page read, one of
    // the next page, one far ahead (each deleted and written again under a new id); a cycle read is
    // removed; a new one starts ahead of the page read, another behind it.
    const lastRead = first[first.length - 1]!;
    const ahead = expectedOrder([...Array(N).keys()]);
    for (const g of [lastRead, ahead[EXPORT_PAGE_ROWS + 3]!, ahead[N - 10]!]) await recount(t.business.id, g);
    await db.execute(sql`delete from report_cycles where business_id = ${t.business.id} and client_messages = ${first[10]!}`);
    const added = (g: number, at: string) =>
      db.execute(sql`
        insert into report_cycles (business_id, conversation_id, channel, start_message_id, started_at, client_messages, replies)
        values (${t.business.id}, ${conv.id}, 'sms', ${200_000 + g}, ${at}::timestamptz, ${g}, 0)`);
    await added(N, '2026-06-01T00:02:00.5Z'); // after the page read: exported in its place
    await added(N + 1, '2026-06-01T00:00:01Z'); // before it: the export has passed that point

    let rest: number[] = [];
    for (let page = await read(); page !== null; page = await read()) rest = rest.concat(cyclesOf(page));
    const all = [...first, ...rest];
    expect(all.filter((g, i) => all.indexOf(g) !== i)).toEqual([]); // nothing twice
    // Every cycle there throughout, in order, and the one added ahead in its place.
    const expectedRest = expectedOrder([...Array(N).keys()]).slice(EXPORT_PAGE_ROWS);
    const at = expectedRest.findIndex((g) => micros(g) >= 120_500_000); // BASE is 1 µs past midnight
    expect(rest).toEqual([...expectedRest.slice(0, at), N, ...expectedRest.slice(at)]);
  });
});
