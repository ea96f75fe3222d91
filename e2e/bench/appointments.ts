import { fmt, median, percentile, pool, printFigures, sleep, waitUntil, type Figure } from './harness';
import { cloneAppointments } from './clone-appointments';
import { now, startReceiver } from './receiver';
import { inboundSid, loadAverage, machine, onStop, runBench, startStack } from './stack';

/**
 * `npm run bench:appointments`: appointments and their reminders (docs/api.md#appointments) end to
 * end, issue 38's benchmark. The production web server and ONE worker (sending to the local fake
 * Twilio through the real twilio client), a local receiver of the outgoing webhooks
 * (receiver.ts), one business with its SMS number, the default reminder rules (two days before,
 * asking to confirm; two hours before) and BENCH_APPOINTMENTS (100,000) clients.
 *
 * Scheduling: every appointment is upserted by the service the PUT calls (`upsertAppointment`, in
 * this process, BENCH_UPSERT_CONCURRENCY (6, a web process's pool) at a time), each writing its two
 * reminders (scheduled texts, their send-later jobs, the events). Figures: appointments/s of each
 * batch of BENCH_BATCH (10,000) and their median, and the median and p95 ms of one upsert. Every
 * tenth appointment starts two days after one moment D, a minute boundary far enough ahead for the
 * seeding to end (estimated from the first batch's rate), so that BENCH_DUE (10,000) asking
 * reminders fall due at D, amid the other 190,000 jobs waiting for later; the others start 3 to 30
 * days ahead.
 *
 * Phase 1: from D until the fake Twilio has received every one of the 10,000 (target: the last
 * within 30 s of D); none before D, none twice.
 * Phase 2: BENCH_REPLIES (1,000) of those clients reply "C", posted at once (BENCH_REPLY_CONCURRENCY,
 * 100, in flight) as signed Twilio inbound webhooks: until every appointment is `confirmed` and
 * every `appointment.confirmed` is delivered to the receiver, verified (target: both within 30 s of
 * the first post).
 */
const APPOINTMENTS = Number(process.env.BENCH_APPOINTMENTS ?? 100_000);
const DUE = Number(process.env.BENCH_DUE ?? 10_000);
const REPLIES = Number(process.env.BENCH_REPLIES ?? 1000);
const UPSERTS = Number(process.env.BENCH_UPSERTS ?? 2500);
const BATCH = Number(process.env.BENCH_BATCH ?? 500);
const UPSERT_CONCURRENCY = Number(process.env.BENCH_UPSERT_CONCURRENCY ?? 6);
const REPLY_CONCURRENCY = Number(process.env.BENCH_REPLY_CONCURRENCY ?? 100);
/** How much longer than its estimate the seeding may take before D; and a minimum lead. */
const SEED_MARGIN = Number(process.env.BENCH_SEED_MARGIN ?? 2);
const TARGET_SECONDS = 30;
const DAY = 86_400_000;
const NUMBER = '+14155550100';

async function main(): Promise<number> {
  if (DUE * 10 > APPOINTMENTS || REPLIES > DUE || 3 * UPSERTS > APPOINTMENTS - DUE)
    throw new Error(
      'BENCH_DUE must be at most a tenth of BENCH_APPOINTMENTS, BENCH_REPLIES at most BENCH_DUE, BENCH_UPSERTS at most a third of the others',
    );
  console.log(`bench:appointments on ${machine()}`);
  const receiver = await startReceiver();
  onStop(() => receiver.close());
  const stack = await startStack({ WEBHOOK_ALLOW_PRIVATE_URLS: 'true' });
  const { sql, fake } = stack;
  // The service runs in this process, on the stack's database: DATABASE_URL before its pool is first used.
  Object.assign(process.env, stack.env, { LOG_LEVEL: 'warn' });
  const { upsertAppointment } = await import('@/server/services/appointments');
  const { PutAppointmentRequest } = await import('@/server/schemas/appointments');
  const { closeDb } = await import('@/server/db/client');
  onStop(closeDb);

  // --- Seed (setup, in bulk): the business, its number, the clients. ---
  const [business] = await sql<{ id: number }[]>`
    insert into businesses (name, sending_window_start, sending_window_end) values ('Appointments Bench', 0, 1440) returning id`;
  const businessId = business!.id;
  await sql`insert into business_sms_numbers (business_id, phone_number, is_default) values (${businessId}, ${NUMBER}, true)`;
  const clients = await sql<{ id: number; phone: string }[]>`
    insert into clients (business_id, name, phone_number, client_type)
    select ${businessId}, 'Client ' || g, '+1415' || lpad((2000000 + g)::text, 7, '0'), 'returning'
    from generate_series(1, ${APPOINTMENTS}) g returning id, phone_number as phone`;
  clients.sort((a, b) => a.id - b.id);
  const endpoint = await stack.api('POST', `/businesses/${businessId}/webhook-endpoints`, {
    url: `${receiver.url}/confirmed`,
    event_types: ['appointment.confirmed'],
    description: 'bench appointments',
  });
  await receiver.addEndpoint('confirmed', String(endpoint.secret));
  console.log(`seeded business ${businessId}: ${clients.length.toLocaleString('en-US')} clients, default reminder rules`);

  // --- Scheduling: appointments through upsertAppointment (measured), the rest in bulk (setup). ---
  const isDue = (i: number) => i % 10 === 9 && Math.floor(i / 10) < DUE;
  const dueIndexes = clients.map((_, i) => i).filter(isDue);
  const others = clients.map((_, i) => i).filter((i) => !isDue(i));
  const sample = others.slice(0, UPSERTS);
  const upsertMs: number[] = [];
  let dueAt = NaN;
  const startsAt = (i: number) => {
    if (isDue(i)) return dueAt + 2 * DAY;
    // 3 to 30 days ahead, on the hour between 09:00 and 17:00 UTC.
    const start = new Date(Date.now() + (3 + (i % 28)) * DAY);
    start.setUTCHours(9 + (i % 9), 0, 0, 0);
    return start.getTime();
  };
  const upsert = async (i: number) => {
    const starts = startsAt(i);
    const body = PutAppointmentRequest.parse({
      client_id: clients[i]!.id,
      starts_at: new Date(starts).toISOString(),
      ends_at: new Date(starts + 3_600_000).toISOString(),
      service: 'Haircut',
    });
    const t = performance.now();
    await upsertAppointment(businessId, `booking-${i}`, body, { type: 'api' });
    upsertMs.push(performance.now() - t);
  };
  /** Upserts in batches of BATCH, BENCH_UPSERT_CONCURRENCY at a time: each batch's rate, and the ms of each upsert. */
  const upsertBatches = async (indexes: number[], label: string) => {
    const rates: number[] = [];
    const first = upsertMs.length;
    for (let from = 0; from < indexes.length; from += BATCH) {
      const batch = indexes.slice(from, from + BATCH);
      const t = now();
      await pool(batch, UPSERT_CONCURRENCY, (i) => upsert(i));
      rates.push(batch.length / ((now() - t) / 1000));
      console.log(
        `  ${label}: ${(from + batch.length).toLocaleString('en-US')} upserted, this batch ${fmt(rates.at(-1)!, 0)}/s; load ${loadAverage()}`,
      );
    }
    return { rates, ms: upsertMs.slice(first) };
  };
  const seedStart = now();
  const small = await upsertBatches(sample, 'beside an empty calendar');
  const [template] = await sql<{ id: number }[]>`
    select id from appointments where business_id = ${businessId} and external_id = ${`booking-${sample[0]}`}`;
  const clone = async (indexes: number[]) => {
    const t = now();
    await cloneAppointments(
      sql,
      businessId,
      { appointmentId: template!.id },
      indexes.map((i) => ({ clientId: clients[i]!.id, externalId: `booking-${i}`, startsAt: new Date(startsAt(i)) })),
    );
    const seconds = (now() - t) / 1000;
    console.log(
      `  bulk seed: ${indexes.length.toLocaleString('en-US')} more appointments and their reminders in SQL, ${fmt(seconds, 0)} s`,
    );
    return seconds;
  };
  const cloneSeconds = await clone(others.slice(UPSERTS, others.length - UPSERTS));
  const full = await upsertBatches(others.slice(others.length - UPSERTS), 'beside the full calendar');
  // D: a minute boundary just after the due ones are written (in bulk, at the rate just seen), then
  // written last: their jobs behind every other waiting one in pg-boss's fetch order (the adverse case).
  const estimate = (cloneSeconds * DUE) / (others.length - 2 * UPSERTS);
  dueAt = Math.ceil((now() + (estimate * SEED_MARGIN + 60) * 1000) / 60_000) * 60_000;
  console.log(
    `the ${DUE.toLocaleString('en-US')} due reminders at D = ${new Date(dueAt).toISOString()}, in ${fmt((dueAt - now()) / 1000, 0)} s`,
  );
  await clone(dueIndexes);
  const seedSeconds = (now() - seedStart) / 1000;
  const [written] = await sql<{ reminders: number; due: number; jobs: number }[]>`
    select count(*)::int as reminders,
           count(*) filter (where m.send_at = ${new Date(dueAt)})::int as due,
           (select count(*)::int from pgboss.job where name = 'sms.send.later' and state = 'created') as jobs
    from appointment_reminders r join messages m on m.business_id = r.business_id and m.id = r.message_id
    where r.business_id = ${businessId} and m.status = 'scheduled'`;
  console.log(
    `scheduled: ${written!.reminders.toLocaleString('en-US')} reminders (${written!.due.toLocaleString('en-US')} due at D), ${written!.jobs.toLocaleString('en-US')} send-later jobs waiting; ${fmt(seedSeconds, 0)} s`,
  );
  if (written!.due !== DUE)
    throw new Error(`${written!.due} reminders due at D, not ${DUE}: the seeding ran past D (raise BENCH_SEED_MARGIN)`);

  // The worker reads the log's events of the seeding meanwhile; how far behind it is when D comes.
  const behind = async () =>
    (
      await sql<{ n: number }[]>`
        select coalesce(max(b.n), 0)::int as n from event_handler_cursors c
        cross join lateral (select count(*) as n from events e where (e.tx_id, e.id) > (c.tx_id, c.event_id)) b`
    )[0]!.n;
  await waitUntil(async () => now() >= dueAt - 5_000 || (await behind()) === 0, Math.max(0, dueAt - now()), 1000);
  const behindAtDue = await behind();
  console.log(
    `${fmt((dueAt - now()) / 1000, 0)} s before D; the log's handlers are ${behindAtDue.toLocaleString('en-US')} events behind; load ${loadAverage()}`,
  );

  // --- Phase 1: D → every due reminder at the fake Twilio. ---
  const duePhones = new Set(dueIndexes.map((i) => clients[i]!.phone));
  const fakeBefore = fake.messages.length;
  const arrived = () => fake.messages.slice(fakeBefore).filter((m) => duePhones.has(m.to));
  const loadAtDue = loadAverage();
  const allArrived = await waitUntil(async () => arrived().length >= DUE, dueAt - now() + 300_000, 100);
  const arrivals = arrived().map((m) => m.dateCreated.getTime() - dueAt);
  const early = arrivals.filter((ms) => ms < 0).length;
  const twice = arrivals.length - new Set(arrived().map((m) => m.to)).size;
  const lastSeconds = Math.max(...arrivals) / 1000;
  const [sent] = await sql<{ n: number; last: number }[]>`
    select count(*)::int as n, extract(epoch from max(sent_at) - ${new Date(dueAt)}::timestamptz)::float8 as last
    from messages where business_id = ${businessId} and send_at = ${new Date(dueAt)} and status = 'sent'`;
  console.log(
    `\nphase 1: ${arrivals.length.toLocaleString('en-US')} of ${DUE.toLocaleString('en-US')} due reminders at the fake Twilio${allArrived ? '' : ' (timed out)'}: ` +
      `the last ${fmt(lastSeconds)} s after D, median ${fmt(median(arrivals) / 1000)} s, p95 ${fmt(percentile(arrivals, 95) / 1000)} s; ` +
      `${early} early, ${twice} twice; ${sent!.n} \`sent\` in the database; load ${loadAtDue} at D, ${loadAverage()} after`,
  );

  // --- Phase 2: a burst of "C" replies. ---
  const replying = dueIndexes.slice(0, REPLIES);
  const appointmentIds = (
    await sql<{ id: number }[]>`
      select id from appointments where business_id = ${businessId} and external_id = any(${replying.map((i) => `booking-${i}`)})`
  ).map((r) => r.id);
  const confirmedCount = async () =>
    (
      await sql<{ n: number }[]>`
        select count(*)::int as n from appointments where business_id = ${businessId} and id = any(${appointmentIds}) and status = 'confirmed'`
    )[0]!.n;
  const wanted = new Set(appointmentIds);
  const delivered = () =>
    new Set(
      receiver.arrivals
        .filter((a) => a.type === 'appointment.confirmed' && wanted.has(a.data.appointment_id as number))
        .map((a) => a.data.appointment_id),
    ).size;
  const loadAtReplies = loadAverage();
  const failures: string[] = [];
  const t0 = now();
  let confirmedAt = NaN;
  let deliveredAt = NaN;
  const watch = (async () => {
    while (now() - t0 < 300_000 && (Number.isNaN(confirmedAt) || Number.isNaN(deliveredAt))) {
      if (Number.isNaN(confirmedAt) && (await confirmedCount()) >= REPLIES) confirmedAt = now();
      if (Number.isNaN(deliveredAt) && delivered() >= REPLIES) deliveredAt = now();
      await sleep(100);
    }
  })();
  await pool(replying, REPLY_CONCURRENCY, async (i, k) => {
    const status = await stack.inboundSms({ sid: inboundSid('appt', k), from: clients[i]!.phone, to: NUMBER, body: 'C' });
    if (status !== 200) failures.push(`inbound answered ${status}`);
  });
  const postedSeconds = (now() - t0) / 1000;
  await watch;
  const confirmedSeconds = (confirmedAt - t0) / 1000;
  const deliveredSeconds = (deliveredAt - t0) / 1000;
  const deliveries = receiver.arrivals.filter((a) => a.type === 'appointment.confirmed');
  const duplicates = deliveries.length - new Set(deliveries.map((a) => a.id)).size;
  console.log(
    `\nphase 2: ${REPLIES.toLocaleString('en-US')} "C" replies posted in ${fmt(postedSeconds)} s (${failures.length} failed${failures.length ? `: ${failures[0]}` : ''}); ` +
      `all confirmed after ${fmt(confirmedSeconds)} s (${await confirmedCount()}), all appointment.confirmed delivered after ${fmt(deliveredSeconds)} s ` +
      `(${delivered()}; ${duplicates} duplicate webhook-ids, ${receiver.badSignatures} bad signatures); load ${loadAtReplies} before, ${loadAverage()} after`,
  );

  const figures: Figure[] = [
    ...[small, full].flatMap((part, k) => {
      const where = k === 0 ? 'calendar empty' : 'calendar full';
      return [
        {
          name: `upserts/s (${where}), median of ${part.rates.length} batches`,
          value: median(part.rates),
          unit: '/s',
          digits: 0,
        },
        { name: `one upsert (${where}), p50`, value: median(part.ms), unit: 'ms', lowerIsBetter: true },
        { name: `one upsert (${where}), p95`, value: percentile(part.ms, 95), unit: 'ms', lowerIsBetter: true },
      ] satisfies Figure[];
    }),
    {
      name: `${DUE.toLocaleString('en-US')} due at D: the last at the fake Twilio after D`,
      value: lastSeconds,
      unit: 's',
      lowerIsBetter: true,
      target: `≤ ${TARGET_SECONDS} s, none early or twice`,
      ok: allArrived && lastSeconds <= TARGET_SECONDS && early === 0 && twice === 0,
    },
    { name: 'due at D: median after D', value: median(arrivals) / 1000, unit: 's', lowerIsBetter: true },
    {
      name: `${REPLIES.toLocaleString('en-US')} "C" replies: all appointments confirmed after`,
      value: confirmedSeconds,
      unit: 's',
      lowerIsBetter: true,
      target: `≤ ${TARGET_SECONDS} s`,
      ok: confirmedSeconds <= TARGET_SECONDS && failures.length === 0,
    },
    {
      name: '"C" replies: all appointment.confirmed delivered after',
      value: deliveredSeconds,
      unit: 's',
      lowerIsBetter: true,
      target: `≤ ${TARGET_SECONDS} s, none twice`,
      ok: deliveredSeconds <= TARGET_SECONDS && duplicates === 0 && receiver.badSignatures === 0,
    },
  ];
  printFigures(`bench:appointments figures (load average at the end ${loadAverage()})`, figures);
  return figures.every((f) => f.ok !== false) ? 0 : 1;
}

runBench(main);
