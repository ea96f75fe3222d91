import os from 'node:os';
import { createSql } from '@/db/connect';
import { benchDatabase, fmt, median, percentile, printFigures, type Figure } from './harness';

/**
 * `npm run bench:reports` (issue 39 item 5): the reports of one business with 90 days and
 * 1,000,000 messages, measured through the reports service (server/services/reports: getReport,
 * exportCycles — what the REST route calls, without HTTP), in this process.
 *
 * 1. Seeds in SQL (INSERT … SELECT from generate_series): one business (America/New_York), two
 *    locations, 8 staff, 100,000 clients and conversations, 10 messages each over 90 days
 *    (client, reply, client, reply…; texts 80%, emails 20%; 5% open with a missed call answered by a
 *    text; 3% of our messages fail with a reason), 70% resolved, 3,000 opt-outs; then the report
 *    tables by the real backfill (recountBusinessReports, timed: it is the backfill's rate); a
 *    sample of cycles is checked against a brute-force count from the messages.
 * 2. Each report (response-times, volume, calls, deliverability) without group_by and with each
 *    group_by over the 90 days: BENCH_REPORT_REPEATS (default 15) requests after one warm-up, p50 and
 *    p95. Target p95 ≤ 500 ms.
 * 3. The CSV export of the 100,000 cycles streamed to the end: time (target ≤ 10 s), rows, bytes,
 *    RSS sampled every 20 ms while it streams (peak vs start: flat memory).
 *
 * BENCH_DATABASE_URL: use that (empty) database instead of a throw-away embedded PostgreSQL.
 */

const CONVERSATIONS = 100_000;
const PER_CONVERSATION = 10;
const DAYS = 90;
const STAFF = 8;
const OPT_OUTS = 3_000;
const REPEATS = Number(process.env.BENCH_REPORT_REPEATS ?? 15);
const P95_TARGET_MS = 500;
const EXPORT_TARGET_S = 10;

async function timed<T>(label: string, fn: () => Promise<T>): Promise<T> {
  const t0 = performance.now();
  const out = await fn();
  console.log(`  ${label.padEnd(64)} ${fmt((performance.now() - t0) / 1000, 1)} s`);
  return out;
}

async function seed(url: string): Promise<{ businessId: number; from: Date; to: Date }> {
  const a = createSql(url, { max: 1 });
  try {
    const [{ n: existing }] = (await a`select count(*)::int as n from businesses`) as unknown as [{ n: number }];
    if (existing > 0) throw new Error('bench:reports seeds its own data set and needs an empty database');
    await a`set work_mem = '256MB'`;
    await a`set maintenance_work_mem = '1GB'`;
    const to = new Date(Math.ceil(Date.now() / 86_400_000) * 86_400_000);
    const from = new Date(to.getTime() - DAYS * 86_400_000);

    const businessId = await timed(`business, 2 locations, ${STAFF} staff`, async () => {
      const [b] = await a<
        { id: number }[]
      >`insert into businesses (name, timezone) values ('Reports Bench', 'America/New_York') returning id`;
      await a`insert into locations (business_id, name) select ${b!.id}, loc from unnest(array['Downtown', 'Uptown']) loc`;
      await a`
        insert into staff (business_id, name, email, role)
        select ${b!.id}, 'Stylist ' || g, 'staff' || g || '@reports.test', case when g = 1 then 'owner' else 'staff' end
        from generate_series(1, ${STAFF}) g`;
      return b!.id;
    });

    await timed(`clients and conversations (${CONVERSATIONS.toLocaleString('en-US')})`, async () => {
      await a`
        insert into clients (business_id, name, email, phone_number, location_id)
        select ${businessId}, 'Client ' || g, 'client' || g || '@example.com', '+1' || (2000000000 + g)::text,
               (select min(id) from locations where business_id = ${businessId})
        from generate_series(1, ${CONVERSATIONS}) g`;
      // 45% at each location, 10% at none; resolved ones are resolved by a staff member.
      await a`
        insert into conversations (business_id, client_id, location_id, status, resolved_by_staff_id, created_at, last_activity_at)
        select ${businessId}, cl.id,
               case when r < 0.45 then l.loc1 when r < 0.9 then l.loc2 end,
               case when cl.id % 10 < 7 then 'resolved' else 'open' end,
               case when cl.id % 10 < 7 then l.staff_ids[1 + (cl.id % ${STAFF})] end,
               ${from.toISOString()}::timestamptz, ${from.toISOString()}::timestamptz
        from (select id, random() as r from clients where business_id = ${businessId}) cl,
             (select (select min(id) from locations where business_id = ${businessId}) as loc1,
                     (select max(id) from locations where business_id = ${businessId}) as loc2,
                     (select array_agg(id order by id) from staff where business_id = ${businessId}) as staff_ids) l`;
      await a`drop table if exists bench_report_conv`;
      // Per conversation: when it starts (anywhere in the 90 days, leaving room for its 10 messages),
      // its channel, whether it opens with a missed call.
      await a`
        create unlogged table bench_report_conv as
        select c.id as conversation_id, c.client_id, (row_number() over (order by c.id))::int - 1 as idx,
               date_trunc('milliseconds', ${from.toISOString()}::timestamptz + random() * ${DAYS - 1} * interval '1 day') as base,
               case when random() < 0.8 then 'sms' else 'email' end as channel, random() < 0.05 as missed_call,
               c.status = 'resolved' as resolved
        from conversations c where c.business_id = ${businessId}`;
    });

    const dropped = await a<{ name: string; def: string }[]>`
      select i.indexrelid::regclass::text as name, pg_get_indexdef(i.indexrelid) as def
      from pg_index i
      where i.indrelid = 'messages'::regclass and not exists (select 1 from pg_constraint c where c.conindid = i.indexrelid)`;
    await timed(
      `messages (${(CONVERSATIONS * PER_CONVERSATION).toLocaleString('en-US')}; secondary indexes dropped)`,
      async () => {
        for (const ix of dropped) await a.unsafe(`drop index ${ix.name}`);
        const replica = await a`set session_replication_role = replica`.then(
          () => true,
          () => false,
        );
        // Message k (0…9) of a conversation: even k the client's, odd k our reply, 20 minutes apart
        // (plus up to 15 minutes), so they stay in order.
        await a`
        insert into messages (business_id, conversation_id, client_id, channel, direction, message_type, category, sender_type,
                              sender_id, staff_id, content, subject, status, error_code, call_outcome, origin, provider, is_read,
                              sent_at, status_updated_at, created_at)
        select ${businessId}, c.conversation_id, c.client_id, x.channel, x.direction,
               case x.channel when 'sms' then 'TEXT' when 'email' then 'EMAIL' else 'CALL' end, 'conversational',
               case when x.direction = 'inbound' then 'client' else 'staff' end,
               case when x.direction = 'inbound' then c.client_id else x.staff_id end,
               case when x.direction = 'outbound' then x.staff_id end,
               case when x.channel <> 'voice' then 'Message ' || x.k end,
               case when x.channel = 'email' then 'Appointment' end,
               x.status, case when x.status in ('failed', 'undelivered', 'bounced') then x.reason end,
               case when x.channel = 'voice' then 'missed' end,
               case when x.direction = 'inbound' then 'webhook' else 'send' end,
               case when x.channel = 'email' then 'smtp' else 'twilio' end, true, x.sent_at, x.sent_at, x.sent_at
        from (
          select g / ${CONVERSATIONS} as k, g % ${CONVERSATIONS} as idx, random() as rf,
                 (array['30003', '30005', '30006', '30007', '30008'])[1 + floor(random() * 5)::int] as reason,
                 (select array_agg(id order by id) from staff where business_id = ${businessId}) as staff_ids
          from generate_series(0, ${CONVERSATIONS * PER_CONVERSATION - 1}) g
        ) g
        join bench_report_conv c on c.idx = g.idx
        cross join lateral (
          -- Milliseconds, as the product writes times (JavaScript dates): the report rows keep no more.
          select g.k, date_trunc('milliseconds', c.base + g.k * interval '20 minutes' + random() * interval '15 minutes') as sent_at,
                 case when g.k = 0 and c.missed_call then 'voice' else c.channel end as channel,
                 case when g.k % 2 = 0 then 'inbound' else 'outbound' end as direction,
                 g.staff_ids[1 + floor(random() * ${STAFF})::int] as staff_id,
                 case when g.k = 0 and c.missed_call then 'completed'
                      when g.k % 2 = 0 then 'received'
                      when g.rf < 0.03 then case when c.channel = 'email' then 'bounced' when g.rf < 0.015 then 'failed' else 'undelivered' end
                      else 'delivered' end as status,
                 case when c.channel = 'email' then 'mailbox_full' else g.reason end as reason
        ) x
        order by x.sent_at`;
        if (replica) await a`set session_replication_role = origin`;
        for (const ix of dropped) await a.unsafe(ix.def);
      },
    );

    await timed('resolutions (70%: status history lines) and opt-outs', async () => {
      await a`
        insert into conversation_activities (business_id, conversation_id, event_id, type, actor_type, actor_staff_id, data, occurred_at)
        select ${businessId}, c.conversation_id, c.conversation_id, 'conversation.status_changed', 'staff', cv.resolved_by_staff_id,
               jsonb_build_object('status', 'resolved', 'previous_status', 'open'),
               c.base + ${PER_CONVERSATION} * interval '20 minutes'
        from bench_report_conv c join conversations cv on cv.id = c.conversation_id
        where c.resolved`;
      await a`
        insert into opt_out_events (business_id, channel, address, action, source, created_at)
        select ${businessId}, case when g % 5 = 0 then 'email' else 'sms' end, 'addr' || g, 'opt_out', 'keyword',
               ${from.toISOString()}::timestamptz + random() * ${DAYS} * interval '1 day'
        from generate_series(1, ${OPT_OUTS}) g`;
      await a`vacuum analyze messages, conversations, conversation_activities, opt_out_events`;
    });
    return { businessId, from, to };
  } finally {
    await a.end();
  }
}

/** A few cycles recounted by brute force in SQL: first response and resolution wall seconds. */
async function checkSample(url: string, businessId: number): Promise<void> {
  const a = createSql(url, { max: 1 });
  try {
    const [counts] = await a<{ cycles: number; conversations: number; replies: number; calls: number }[]>`
      select (select count(*)::int from report_cycles where business_id = ${businessId}) as cycles,
             (select count(*)::int from conversations where business_id = ${businessId}) as conversations,
             (select count(*)::int from report_replies where business_id = ${businessId}) as replies,
             (select count(*)::int from report_missed_calls where business_id = ${businessId}) as calls`;
    const wrong = await a<{ conversation_id: number }[]>`
      with sample as (select id from conversations where business_id = ${businessId} order by random() limit 500),
      brute as (
        select s.id as conversation_id,
          (select min(sent_at) from messages m where m.conversation_id = s.id and m.direction = 'inbound' and m.message_type in ('TEXT', 'EMAIL')) as started_at,
          (select min(sent_at) from messages m where m.conversation_id = s.id and m.direction = 'outbound' and m.message_type in ('TEXT', 'EMAIL')
             and m.sent_at > (select min(sent_at) from messages m2 where m2.conversation_id = s.id and m2.direction = 'inbound' and m2.message_type in ('TEXT', 'EMAIL'))) as first_reply_at,
          (select occurred_at from conversation_activities a where a.conversation_id = s.id) as resolved_at
        from sample s
      )
      select b.conversation_id from brute b left join report_cycles rc on rc.conversation_id = b.conversation_id
      where rc.id is null or rc.started_at <> b.started_at or rc.first_reply_at is distinct from b.first_reply_at
        or rc.resolved_at is distinct from b.resolved_at
        or abs(rc.first_response_seconds - extract(epoch from b.first_reply_at - b.started_at)) > 0.001`;
    console.log(
      `  report rows: ${counts!.cycles.toLocaleString('en-US')} cycles of ${counts!.conversations.toLocaleString('en-US')} conversations, ` +
        `${counts!.replies.toLocaleString('en-US')} reply times, ${counts!.calls.toLocaleString('en-US')} missed calls; ` +
        `sample of 500 against a brute-force count: ${wrong.length === 0 ? 'all agree' : `${wrong.length} DISAGREE (${wrong.slice(0, 5).map((w) => w.conversation_id)})`}`,
    );
    if (wrong.length > 0 || counts!.cycles !== CONVERSATIONS) throw new Error('the seeded report rows do not match the messages');
  } finally {
    await a.end();
  }
}

/**
 * The report's total reply and first response times, read through the rollups, against PostgreSQL's
 * own percentile_cont over every row of the range (slow: once); the rollups' size. Stops if one
 * figure disagrees.
 */
async function checkPercentiles(
  url: string,
  businessId: number,
  range: { from: Date; to: Date },
  report: () => Promise<{ total: Record<string, unknown> }>,
): Promise<void> {
  const a = createSql(url, { max: 1 });
  try {
    await a`set work_mem = '256MB'`;
    const stats = (seconds: string, business: string) =>
      a.unsafe(`count(${seconds})::int as count, percentile_cont(0.5) within group (order by ${seconds}) as median_seconds,
        percentile_cont(0.9) within group (order by ${seconds}) as p90_seconds,
        percentile_cont(0.5) within group (order by ${business}) as median_business_seconds,
        percentile_cont(0.9) within group (order by ${business}) as p90_business_seconds`);
    const [reply] = await a`select ${stats('seconds', 'business_seconds')} from report_replies
      where business_id = ${businessId} and waiting_since >= ${range.from} and waiting_since < ${range.to}`;
    const [first] = await a`select ${stats('first_response_seconds', 'first_response_business_seconds')} from report_cycles
      where business_id = ${businessId} and started_at >= ${range.from} and started_at < ${range.to}`;
    const [size] = await a<{ histograms: number; days: number; messages: number; bytes: string }[]>`
      select (select count(*)::int from report_histograms where business_id = ${businessId}) as histograms,
             (select count(*)::int from report_day_counts where business_id = ${businessId}) as days,
             (select count(*)::int from report_messages where business_id = ${businessId}) as messages,
             pg_size_pretty(pg_total_relation_size('report_histograms') + pg_total_relation_size('report_day_counts')
               + pg_total_relation_size('report_messages')) as bytes`;
    const got = (await report()).total as Record<string, Record<string, number | null>>;
    const same = JSON.stringify([got.reply, got.first_response]) === JSON.stringify([reply, first]);
    console.log(
      `  rollups: ${size!.histograms.toLocaleString('en-US')} histogram rows, ${size!.days.toLocaleString('en-US')} day rows, ` +
        `${size!.messages.toLocaleString('en-US')} messages counted (${size!.bytes}); reply and first response times ` +
        `against percentile_cont over every row: ${same ? 'equal' : `DIFFER ${JSON.stringify([got.reply, got.first_response, reply, first])}`}`,
    );
    if (!same) throw new Error('the report does not match percentile_cont over the rows');
  } finally {
    await a.end();
  }
}

async function main() {
  console.log(
    `bench:reports — load average ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}, ${os.cpus().length} cores`,
  );
  const database = await benchDatabase();
  process.env.DATABASE_URL = database.url;
  process.env.LOG_LEVEL ??= 'warn';
  // After DATABASE_URL: the services' pool reads it when first used.
  const { recountBusinessReports } = await import('@/server/services/reports/recount');
  const { getReport, exportCycles } = await import('@/server/services/reports');
  const { REPORTS, GROUP_BYS } = await import('@/server/shared/reports');
  const { closeDb } = await import('@/server/db/client');
  try {
    console.log('\nseeding');
    const { businessId, from, to } = await seed(database.url);
    const t0 = performance.now();
    const recounted = await timed('report tables: recountBusinessReports (the backfill)', () =>
      recountBusinessReports(businessId),
    );
    const backfillSeconds = (performance.now() - t0) / 1000;
    const a = createSql(database.url, { max: 1 });
    await a`analyze report_cycles, report_replies, report_missed_calls, report_messages, report_histograms, report_day_counts`;
    await a.end();
    await checkSample(database.url, businessId);

    const caller = { kind: 'business_key' as const, scope: 'bench', businessId, apiKeyId: 0 };
    await checkPercentiles(database.url, businessId, { from, to }, () =>
      getReport(caller, businessId, 'response-times', { from, to }),
    );
    const figures: Figure[] = [
      {
        name: `backfill: conversations recounted per second (${recounted.toLocaleString('en-US')})`,
        value: recounted / backfillSeconds,
        unit: '/s',
        digits: 0,
      },
    ];

    console.log(`\nreports over ${DAYS} days, ${REPEATS} requests each after one warm-up (load ${os.loadavg()[0]!.toFixed(1)})`);
    for (const report of REPORTS) {
      for (const groupBy of [undefined, ...GROUP_BYS]) {
        if (report === 'calls' && groupBy === 'channel') continue;
        const q = { from, to, group_by: groupBy };
        await getReport(caller, businessId, report, q);
        const ms: number[] = [];
        for (let i = 0; i < REPEATS; i++) {
          const t = performance.now();
          await getReport(caller, businessId, report, q);
          ms.push(performance.now() - t);
        }
        const p95 = percentile(ms, 95);
        const name = `${report}${groupBy ? ` group_by=${groupBy}` : ''}`;
        console.log(`  ${name.padEnd(40)} p50 ${fmt(median(ms)).padStart(8)} ms   p95 ${fmt(p95).padStart(8)} ms`);
        figures.push({ name: `${name}: p50`, value: median(ms), unit: 'ms', lowerIsBetter: true });
        figures.push({
          name: `${name}: p95`,
          value: p95,
          unit: 'ms',
          lowerIsBetter: true,
          target: `≤ ${P95_TARGET_MS} ms`,
          ok: p95 <= P95_TARGET_MS,
        });
      }
    }

    console.log(`\nCSV export of the ${DAYS} days (load ${os.loadavg()[0]!.toFixed(1)})`);
    global.gc?.();
    const rssStart = process.memoryUsage().rss;
    let rssPeak = rssStart;
    const sampler = setInterval(() => {
      rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
    }, 20);
    const t2 = performance.now();
    const stream = await exportCycles(caller, businessId, { from, to });
    const reader = stream.getReader();
    let bytes = 0;
    let lines = 0;
    let firstChunkMs = NaN;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (Number.isNaN(firstChunkMs)) firstChunkMs = performance.now() - t2;
      bytes += value.byteLength;
      for (const b of value) if (b === 10) lines++;
      rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
    }
    const exportSeconds = (performance.now() - t2) / 1000;
    clearInterval(sampler);
    const rows = lines - 1;
    console.log(
      `  ${rows.toLocaleString('en-US')} rows, ${fmt(bytes / 1e6)} MB in ${fmt(exportSeconds, 2)} s; ` +
        `RSS ${fmt(rssStart / 1e6)} MB at the start, peak ${fmt(rssPeak / 1e6)} MB (+${fmt((rssPeak - rssStart) / 1e6)} MB)`,
    );
    figures.push(
      {
        name: `export: ${rows.toLocaleString('en-US')} cycles streamed`,
        value: exportSeconds,
        unit: 's',
        digits: 2,
        lowerIsBetter: true,
        target: `≤ ${EXPORT_TARGET_S} s`,
        ok: exportSeconds <= EXPORT_TARGET_S && rows >= CONVERSATIONS,
      },
      { name: 'export: first bytes after', value: firstChunkMs, unit: 'ms', lowerIsBetter: true },
      { name: 'export: RSS at the start', value: rssStart / 1e6, unit: 'MB' },
      {
        name: 'export: RSS peak growth while streaming',
        value: (rssPeak - rssStart) / 1e6,
        unit: 'MB',
        target: '≤ 64 MB (flat: the CSV is ~' + fmt(bytes / 1e6, 0) + ' MB)',
        ok: rssPeak - rssStart <= 64e6,
      },
    );
    printFigures(
      `bench:reports figures (load average at the end ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')})`,
      figures,
    );
  } finally {
    await closeDb();
    await database.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
