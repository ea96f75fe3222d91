import os from 'node:os';
import PgBoss from 'pg-boss';
import { createSql } from '@/db/connect';
import { startFakeTwilio } from '@/server/testing/fake-twilio';
import { startSmtpSink } from '@/server/testing/smtp-sink';
import { createTwilioProvider } from '@/server/providers/twilio';
import {
  benchDatabase,
  repeatCount,
  repeatRuns,
  type Figure,
  fmt,
  median,
  percentile,
  sleep,
  startWebServer,
  startWorkerProcess,
  stopChild,
  waitUntil,
} from './harness';
import { fetchIndexName, fetchIndexSql } from '@/server/jobs/install';
import { ACCOUNT_SID, AUTH_TOKEN, PLATFORM_KEY, productEnv } from './stack';

/**
 * `npm run bench:send [-- --chaos]`: the outbound pipeline end to end on this machine.
 * Seeds a business with 10,000 clients, POSTs 10 bulk requests of 1,000 SMS to the production
 * server (after one request, not counted, that warms the fresh server up), and measures request latency, time until every SMS is `sent` against a local fake Twilio
 * (≈5 ms per call), queue pickup, 2,000 emails into a local SMTP server, and pg-boss fetch time at
 * a 200,000-job backlog with and without our index. Beside the pipeline rate it prints the ceiling:
 * the same fake answering the real twilio client from one process, no database.
 * `--chaos` SIGKILLs the worker twice during the SMS run and reports lost and duplicated messages.
 * `--repeat N` runs the SMS, pickup, ceiling and email measurements N times in a row (each run with a
 * business and clients of its own, on the same server and worker), then the median and spread of each.
 * Last, send later (docs/api.md#send-later): 10,000 SMS scheduled for the same moment, and how long
 * after it the last one is `sent` (target ≤ 30 s); the unscheduled figures above run before it.
 */
const chaos = process.argv.includes('--chaos');
const SMS_REQUESTS = Number(process.env.BENCH_SMS_REQUESTS ?? 10);
const PER_REQUEST = 1000;
const EMAILS = Number(process.env.BENCH_EMAILS ?? 2000);
const SCHEDULED = Number(process.env.BENCH_SCHEDULED ?? 10_000);
const CLIENTS = 10_000;
const REPEAT = repeatCount();

async function main() {
  console.log(`bench:send on ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown cpu'})${chaos ? ', --chaos' : ''}`);
  const database = await benchDatabase();
  const sql = createSql(database.url, { max: 4 });
  const fake = await startFakeTwilio({ accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, latencyMs: 5 });
  const sink = await startSmtpSink();

  // Seed, per run: one business, its number and sender, 10,000 clients with phones and emails.
  const seedBusiness = async (run: number) => {
    const [business] = await sql<{ id: number }[]>`
      insert into businesses (name, from_email, from_name, sending_window_start, sending_window_end)
      values ('Bench Salon', 'hello@bench.test', 'Bench Salon', 0, 1440) returning id`;
    const businessId = business!.id;
    await sql`insert into business_sms_numbers (business_id, phone_number, is_default) values (${businessId}, ${`+1415555${String(run).padStart(4, '0')}`}, true)`;
    await sql`
      insert into clients (business_id, name, phone_number, email, client_type)
      select ${businessId}, 'Client ' || g, '+1415' || lpad((2000000 + g)::text, 7, '0'), 'client' || g || '@bench.test', 'returning'
      from generate_series(1, ${CLIENTS}) g`;
    const clientIds = (await sql<{ id: number }[]>`select id from clients where business_id = ${businessId} order by id`).map(
      (r) => r.id,
    );
    console.log(`seeded 1 business (${businessId}), ${clientIds.length} clients`);
    return { businessId, clientIds };
  };

  const env = productEnv(database.url, fake.url, {
    EMAIL_PROVIDER: 'smtp',
    SMTP_URL: sink.url,
    RATE_LIMIT_PER_MINUTE: '100000',
    WORKER_MAINTENANCE_INTERVAL_SECONDS: '2',
  });
  const web = await startWebServer(env);
  let worker = startWorkerProcess(env);
  await sleep(1500);
  // One bulk request first, not counted: a fresh server loads the route's modules, opens its pool's
  // connections and plans its statements on the first request (the steady state is what is
  // measured). Its business and clients are its own; its texts are all sent before the runs start.
  {
    const { businessId, clientIds } = await seedBusiness(REPEAT + 2);
    const t0 = performance.now();
    const res = await fetch(`${web.url}/api/v1/businesses/${businessId}/sms`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': PLATFORM_KEY },
      body: JSON.stringify({
        sender_type: 'system',
        category: 'reminder',
        messages: clientIds.slice(0, PER_REQUEST).map((id, i) => ({ client_id: id, message: `Warm-up ${i}` })),
      }),
    });
    if (res.status !== 200) throw new Error(`warm-up request answered ${res.status}: ${await res.text()}`);
    console.log(`warm-up: one bulk request on the fresh server, ${fmt(performance.now() - t0, 0)} ms (not counted)`);
    await waitUntil(
      async () =>
        (
          await sql<
            { n: number }[]
          >`select count(*)::int as n from messages where business_id = ${businessId} and status = 'sent'`
        )[0]!.n >= PER_REQUEST,
      120_000,
      100,
    );
  }
  let allLost = 0;
  let allDuplicated = 0;
  let kills = 0;

  await repeatRuns(
    REPEAT,
    async (run) => {
      const { businessId, clientIds } = await seedBusiness(run);
      const fakeBefore = fake.messages.length;
      const sentOf = async (channel: 'sms' | 'email') =>
        (
          await sql<
            { n: number }[]
          >`select count(*)::int as n from messages where business_id = ${businessId} and channel = ${channel} and status = 'sent'`
        )[0]!.n;
      // --- SMS: 10 bulk requests of 1,000 ---
      const latencies: number[] = [];
      const started = Date.now();
      const chaosLoop = chaos
        ? (async () => {
            for (const threshold of [0.3, 0.6]) {
              await waitUntil(
                async () => fake.messages.length - fakeBefore >= threshold * SMS_REQUESTS * PER_REQUEST,
                120_000,
                20,
              );
              await stopChild(worker, 'SIGKILL');
              kills++;
              // A killed worker's jobs stay active until they expire (60 s in production); let them
              // expire now so the run does not wait a minute. Recovery logic is unchanged.
              await sql`update pgboss.job set expire_in = interval '1 second' where name in ('sms.send', 'sms.send.bulk') and state = 'active'`;
              worker = startWorkerProcess(env);
            }
          })()
        : Promise.resolve();
      for (let r = 0; r < SMS_REQUESTS; r++) {
        const messages = Array.from({ length: PER_REQUEST }, (_, i) => ({
          client_id: clientIds[(r * PER_REQUEST + i) % clientIds.length],
          message: `Bench ${run}.${r}-${i}: your appointment is confirmed for Friday at 10:30.`,
        }));
        const t0 = performance.now();
        const res = await fetch(`${web.url}/api/v1/businesses/${businessId}/sms`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': PLATFORM_KEY },
          body: JSON.stringify({ sender_type: 'system', category: 'reminder', messages }),
        });
        latencies.push(performance.now() - t0);
        if (res.status !== 200) throw new Error(`bulk request answered ${res.status}: ${await res.text()}`);
      }
      const total = SMS_REQUESTS * PER_REQUEST;
      const allSent = await waitUntil(async () => (await sentOf('sms')) >= total, 600_000, 100);
      const smsSeconds = (Date.now() - started) / 1000;
      const sentBefore = await sentOf('sms');
      await chaosLoop;
      // Queue pickup on an idle queue: single messages, one every 300 ms, enqueue → worker start.
      const pickupIds: number[] = [];
      for (let i = 0; i < 20; i++) {
        const res = await fetch(`${web.url}/api/v1/businesses/${businessId}/sms`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': PLATFORM_KEY },
          body: JSON.stringify({ sender_type: 'system', messages: [{ client_id: clientIds[i], message: `Pickup probe ${i}` }] }),
        });
        pickupIds.push(((await res.json()) as { message_ids: number[] }).message_ids[0]!);
        await sleep(300);
      }
      await waitUntil(
        async () =>
          (
            await sql<{ n: number }[]>`select count(*)::int as n from messages where id = any(${pickupIds}) and status = 'sent'`
          )[0]!.n === pickupIds.length,
        30_000,
      );
      const pickup = await sql<{ ms: number }[]>`
    select (extract(epoch from (started_on - created_on)) * 1000)::float8 as ms from pgboss.job
    where name = 'sms.send' and started_on is not null and (data->>'messageId')::bigint = any(${pickupIds})`;
      const statusCounts = await sql<
        { status: string; n: number }[]
      >`select status, count(*)::int as n from messages where business_id = ${businessId} and channel = 'sms' group by status`;
      const bodies = new Map<string, number>();
      for (const m of fake.messages.slice(fakeBefore)) bodies.set(m.body, (bodies.get(m.body) ?? 0) + 1);
      const duplicated = [...bodies.values()].filter((n) => n > 1).reduce((s, n) => s + n - 1, 0);
      const lost = total - sentBefore;

      // --- Ceiling: the fake answering the twilio client from this process, no database. ---
      const provider = createTwilioProvider({ accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, apiBaseUrl: fake.url });
      const ceilingN = 3000;
      const c0 = performance.now();
      let next = 0;
      await Promise.all(
        Array.from({ length: 64 }, async () => {
          while (next < ceilingN) {
            const i = next++;
            await provider.send({
              messageId: i,
              to: '+14155559999',
              from: '+14155550000',
              body: `ceiling ${i}`,
              statusCallback: 'http://127.0.0.1:1/cb',
            });
          }
        }),
      );
      const ceiling = ceilingN / ((performance.now() - c0) / 1000);

      // --- Email: 2,000 to the SMTP server ---
      const e0 = Date.now();
      for (let sent = 0; sent < EMAILS; sent += PER_REQUEST) {
        const n = Math.min(PER_REQUEST, EMAILS - sent);
        const res = await fetch(`${web.url}/api/v1/businesses/${businessId}/email`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': PLATFORM_KEY },
          body: JSON.stringify({
            sender_type: 'system',
            messages: Array.from({ length: n }, (_, i) => ({
              client_id: clientIds[(sent + i) % clientIds.length],
              subject: `Your receipt #${sent + i}`,
              message: 'Thank you for visiting Bench Salon today.',
            })),
          }),
        });
        if (res.status !== 200) throw new Error(`email request answered ${res.status}: ${await res.text()}`);
      }
      await waitUntil(async () => (await sentOf('email')) >= EMAILS, 600_000, 100);
      const emailSeconds = (Date.now() - e0) / 1000;
      const rate = total / smsSeconds;
      console.log('\nresults');
      console.log(`  cores                                  ${os.cpus().length}`);
      console.log(
        `  bulk 1,000-SMS request latency          p50 ${fmt(median(latencies), 0)} ms, p95 ${fmt(percentile(latencies, 95), 0)} ms (target p95 ≤ 300 ms)`,
      );
      console.log(`  each bulk request, in order (ms)        ${latencies.map((l) => fmt(l, 0)).join(' ')}`);
      console.log(
        `  SMS queued → sent                       ${total} in ${fmt(smsSeconds)} s = ${fmt(rate, 0)} SMS/s (target ≥ 1,000)`,
      );
      console.log(
        `  ceiling: twilio client → fake, no DB    ${fmt(ceiling, 0)} sends/s; pipeline at ${fmt((100 * rate) / ceiling, 0)}% of it`,
      );
      console.log(
        `  queue pickup, idle queue (20 probes)    p50 ${fmt(median(pickup.map((p) => p.ms)), 0)} ms, p95 ${fmt(
          percentile(
            pickup.map((p) => p.ms),
            95,
          ),
          0,
        )} ms (target p95 ≤ 1,000 ms)`,
      );
      console.log(
        `  email queued → sent (SMTP)              ${EMAILS} in ${fmt(emailSeconds)} s = ${fmt(EMAILS / emailSeconds, 0)} emails/s (target ≥ 300)`,
      );
      console.log(
        `  final SMS statuses                      ${statusCounts.map((s) => `${s.status} ${s.n}`).join(', ')}${allSent ? '' : ' (timed out)'}`,
      );
      if (chaos)
        console.log(`  chaos: worker killed ${kills}×             lost ${lost}, duplicated ${duplicated} (must be 0 and 0)`);
      else console.log(`  lost ${lost}, duplicated ${duplicated}`);

      allLost += lost;
      allDuplicated += duplicated;
      const bulkP95 = percentile(latencies, 95);
      const pickupP95 = percentile(
        pickup.map((p) => p.ms),
        95,
      );
      const figures: Figure[] = [
        {
          name: 'bulk 1,000-SMS request p95',
          value: bulkP95,
          unit: 'ms',
          digits: 0,
          lowerIsBetter: true,
          target: '≤ 300 ms',
          ok: bulkP95 <= 300,
        },
        {
          name: 'SMS queued → sent',
          value: rate,
          unit: 'SMS/s',
          digits: 0,
          ceiling: { name: 'twilio client → fake, no DB', value: ceiling },
          target: '≥ 1,000 SMS/s',
          ok: rate >= 1000,
        },
        {
          name: 'queue pickup p95',
          value: pickupP95,
          unit: 'ms',
          digits: 0,
          lowerIsBetter: true,
          target: '≤ 1,000 ms',
          ok: pickupP95 <= 1000,
        },
        {
          name: 'email queued → sent',
          value: EMAILS / emailSeconds,
          unit: 'emails/s',
          digits: 0,
          target: '≥ 300',
          ok: EMAILS / emailSeconds >= 300,
        },
        {
          name: 'lost + duplicated SMS',
          value: lost + duplicated,
          unit: '',
          digits: 0,
          target: '0',
          ok: lost + duplicated === 0,
        },
      ];
      return figures;
    },
    'bench:send',
  );
  // --- send later: 10,000 SMS due at one moment, on a business of its own, after the runs above ---
  const scheduled =
    SCHEDULED > 0
      ? await (async () => {
          const { businessId, clientIds } = await seedBusiness(REPEAT + 1);
          return scheduledBurst(web.url, businessId, clientIds, sql);
        })()
      : null;

  await stopChild(worker);
  await web.stop();

  // --- pg-boss fetch at a 200,000-job backlog, with and without the fetch index ---
  const boss = new PgBoss({ connectionString: database.url, supervise: false, schedule: false, max: 2 });
  boss.on('error', () => {});
  await boss.start();
  await boss.createQueue('bench.backlog');
  // Created after the install: its partition gets the fetch index here, as install.ts gives every immediate queue's.
  const [backlog] = await sql<{ p: string }[]>`select partition_name as p from pgboss.queue where name = 'bench.backlog'`;
  await sql.unsafe(fetchIndexSql(backlog!.p));
  for (let i = 0; i < 200_000; i += 10_000) {
    await boss.insert(Array.from({ length: 10_000 }, (_, j) => ({ name: 'bench.backlog', data: { n: i + j } })));
  }
  await sql`analyze pgboss.job`;
  const timeFetches = async () => {
    const times: number[] = [];
    for (let i = 0; i < 20; i++) {
      const t0 = performance.now();
      const jobs = await boss.fetch('bench.backlog', { batchSize: 50 });
      times.push(performance.now() - t0);
      if (jobs?.length)
        await boss.complete(
          'bench.backlog',
          jobs.map((j) => j.id),
        );
    }
    return median(times);
  };
  const withIndex = await timeFetches();
  await sql.unsafe(`drop index pgboss.${fetchIndexName(backlog!.p)}`);
  const withoutIndex = await timeFetches();
  await boss.stop({ graceful: false, wait: true });

  console.log(
    `\npg-boss fetch(50) at 200,000 waiting    ${fmt(withIndex, 2)} ms with the fetch index, ${fmt(withoutIndex, 1)} ms without (target ≤ 10 ms)`,
  );
  if (scheduled) {
    console.log(
      `send later: ${SCHEDULED} due at once      last sent ${fmt(scheduled.lastSentAfter)} s after send_at, p50 ${fmt(
        scheduled.p50,
      )} s (target ≤ 30 s); ${scheduled.sent} sent, ${scheduled.early} early`,
    );
  }

  await sql.end();
  await fake.close();
  await sink.close();
  await database.stop();
  process.exit(chaos && (allLost > 0 || allDuplicated > 0) ? 1 : 0);
}

/**
 * Schedules SCHEDULED SMS (requests of 1,000) for one moment far enough ahead to post them all,
 * waits until every one is `sent`, and answers how long after send_at the last one went (by the
 * database's clock: sent_at is set when each is claimed), the median, and any sent before it.
 */
async function scheduledBurst(webUrl: string, businessId: number, clientIds: number[], sql: ReturnType<typeof createSql>) {
  const sendAt = new Date(Date.now() + 20_000 + SCHEDULED * 2);
  for (let sent = 0; sent < SCHEDULED; sent += PER_REQUEST) {
    const n = Math.min(PER_REQUEST, SCHEDULED - sent);
    const res = await fetch(`${webUrl}/api/v1/businesses/${businessId}/sms`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': PLATFORM_KEY },
      body: JSON.stringify({
        sender_type: 'system',
        category: 'reminder',
        send_at: sendAt.toISOString(),
        messages: Array.from({ length: n }, (_, i) => ({
          client_id: clientIds[(sent + i) % clientIds.length],
          message: `Later ${sent + i}: see you tomorrow at 9:00.`,
        })),
      }),
    });
    if (res.status !== 200) throw new Error(`scheduled request answered ${res.status}: ${await res.text()}`);
  }
  if (Date.now() >= sendAt.getTime()) console.warn('  (send later: posting took past send_at; the figure is still from send_at)');
  const count = async () =>
    (await sql<{ n: number }[]>`select count(*)::int as n from messages where send_at = ${sendAt} and status = 'sent'`)[0]!.n;
  await waitUntil(async () => (await count()) >= SCHEDULED, 600_000, 200);
  const [r] = await sql<{ last: number; p50: number; early: number; sent: number }[]>`
    select extract(epoch from max(sent_at) - ${sendAt}::timestamptz)::float8 as last,
           extract(epoch from percentile_cont(0.5) within group (order by sent_at - ${sendAt}::timestamptz))::float8 as p50,
           count(*) filter (where sent_at < ${sendAt})::int as early, count(*)::int as sent
    from messages where send_at = ${sendAt}`;
  return { lastSentAfter: r!.last, p50: r!.p50, early: r!.early, sent: r!.sent };
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
