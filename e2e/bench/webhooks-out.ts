import { readFileSync } from 'node:fs';
import os from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Webhook } from 'standardwebhooks';
import { postWebhook } from '@/server/lib/public-post';
import { senderPolicy } from '@/workers/outgoing-webhooks';
import { fmt, median, percentile, pool, repeatCount, repeatRuns, sleep, waitUntil, type Figure } from './harness';
import { now, startReceiverProcess, type Arrival, type Receiver } from './receiver';
import { inboundSid, machine, onStop, runBench, startStack } from './stack';

/**
 * `npm run bench:webhooks-out [-- --repeat N]`: outgoing webhooks (docs/api.md#webhooks-you-receive-from-us)
 * end to end. The production web server and ONE worker (workers/index.ts, WEBHOOK_ALLOW_PRIVATE_URLS=true)
 * against a local receiver in a process of its own (receiver-process.ts) that verifies every
 * signature with `standardwebhooks` and records each arrival's webhook-id, type, data.sequence,
 * data.conversation_id and time. Two endpoints are registered over REST: one for every type, one
 * for the conversation types and message.received. The events come from real traffic, every
 * second: a bulk request of SMS to new clients (conversation.created, message.created, and
 * message.status_updated when the worker has sent them to the fake Twilio), signed `delivered`
 * status callbacks for the texts sent the second before, inbound SMS (message.received, and
 * conversation.status_changed when it reopens one), assignments and resolutions over REST.
 *
 * Phase 1 (throughput): BENCH_SECONDS (30) of traffic; deliveries/s accepted by the receiver over
 * the window after the first 5 s, beside the rate offered and the ceiling (the product's POST from
 * this process to the same receiver, no database); latency p50/p95/p99 of receiver arrival minus
 * the event's commit (track_commit_timestamp, on in the embedded PostgreSQL), minus its
 * `occurred_at` (its transaction's start) and minus the time the request that caused it returned;
 * a breakdown by event type; and the rate at which a backlog left when the traffic stops is
 * delivered.
 *
 * Phase 1b (sustained rate): the receiver holds its answers BENCH_HOLD_SECONDS (20) while the
 * traffic goes on, then answers at once; deliveries/s from then until the worker has caught up,
 * the traffic still going.
 *
 * Phase 2 (outage): traffic at BENCH_OUTAGE_SMS_PER_SECOND; after 5 s the receiver refuses
 * connections (BENCH_DOWN_MODE=503: answers 503) for BENCH_DOWN_SECONDS (60), then is back while
 * traffic goes on 15 s more. It reports how long until every event is delivered, waiting at most
 * BENCH_RECOVERY_WAIT_SECONDS (45) after the traffic; what is still pending then is reported with
 * when its next attempt is due, and moved to now (the retry schedule's clock set forward, said so in
 * the output; BENCH_REAL_WAIT=1 waits for real instead) so that the checks can run: every event
 * delivered to every endpoint that takes it, each (endpoint, conversation) in sequence order with no
 * gap, duplicate webhook-ids (0 expected: nothing crashes here). Exits 1 when a check fails.
 */
const SECONDS = Number(process.env.BENCH_SECONDS ?? 30);
const SMS_PER_SECOND = Number(process.env.BENCH_SMS_PER_SECOND ?? 250);
const OUTAGE_SMS_PER_SECOND = Number(process.env.BENCH_OUTAGE_SMS_PER_SECOND ?? 100);
const DOWN_SECONDS = Number(process.env.BENCH_DOWN_SECONDS ?? 60);
const RECOVERY_WAIT_SECONDS = Number(process.env.BENCH_RECOVERY_WAIT_SECONDS ?? 45);
const REAL_WAIT = process.env.BENCH_REAL_WAIT === '1';
const DOWN_MODE: 'refuse' | '503' = process.env.BENCH_DOWN_MODE === '503' ? '503' : 'refuse';
/** Per second, as shares of the SMS rate: inbound texts, assignments, resolutions. */
const INBOUND_SHARE = 0.2;
const ASSIGN_SHARE = 0.1;
const RESOLVE_SHARE = 0.1;
/** Phase 1b: how long the receiver holds its answers, then how long the traffic goes on after. */
const HOLD_SECONDS = Number(process.env.BENCH_HOLD_SECONDS ?? 20);
const CAPACITY_SECONDS = Number(process.env.BENCH_CAPACITY_SECONDS ?? 30);
/** Phase 1b is over when fewer than this many events and deliveries wait: about what a second offers. */
const CAUGHT_UP_BELOW = 300;
/** The first seconds of phase 1 are not counted in its rate (the pipeline filling). */
const WARMUP_SECONDS = 5;
const UP_BEFORE_SECONDS = 5;
const UP_AFTER_SECONDS = 15;
/** The second endpoint's types: what a platform following conversations (not deliveries) takes. */
const SUBSET_TYPES = ['message.received', 'conversation.created', 'conversation.assigned', 'conversation.status_changed'];

/** Which request caused an event, as far as the bench can tell from its data. */
function causeKey(type: string, data: Record<string, unknown>): string | null {
  switch (type) {
    case 'message.created':
    case 'message.received':
      return `${type}:${data.message_id}`;
    case 'message.status_updated':
      return data.status === 'delivered' ? `${type}:${data.message_id}` : null; // 'sent' is the worker's
    case 'conversation.created':
      return `${type}:${data.client_id}`;
    case 'conversation.assigned':
      return `${type}:${data.conversation_id}`;
    case 'conversation.status_changed':
      return data.status === 'resolved' ? `${type}:${data.conversation_id}` : null; // reopening: an inbound's
    default:
      return null;
  }
}

/** A process's CPU time so far (user + system, every thread), in seconds; NaN where /proc is not there. */
function cpuSeconds(pid: number | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime: clock ticks (USER_HZ, 100)
  } catch {
    return NaN;
  }
}

/** The receiver's own ceiling: the product's POST (same policy as the worker's) from this process, no database. */
async function ceilingRate(receiver: Receiver): Promise<number> {
  const secret = `whsec_${Buffer.from('bench-ceiling-secret-0123456789!').toString('base64')}`;
  await receiver.addEndpoint('ceiling', secret);
  const wh = new Webhook(secret);
  const policy = senderPolicy({ allowPrivate: true });
  const n = 5000;
  const body = JSON.stringify({ type: 'message.created', timestamp: new Date().toISOString(), data: { message_id: 1 } });
  const t0 = performance.now();
  let failed = 0;
  await pool(
    Array.from({ length: n }, (_, i) => i),
    256,
    async (i) => {
      const id = `ceiling-${i}`;
      const ts = new Date();
      const result = await postWebhook(
        `${receiver.url}/ceiling`,
        body,
        {
          'webhook-id': id,
          'webhook-timestamp': String(Math.floor(ts.getTime() / 1000)),
          'webhook-signature': wh.sign(id, ts, body),
        },
        policy,
      );
      if (result.status !== 204) failed++;
    },
  );
  const rate = n / ((performance.now() - t0) / 1000);
  policy.close();
  await receiver.sync();
  // The ceiling's arrivals are not the run's.
  for (let i = receiver.arrivals.length - 1; i >= 0; i--)
    if (receiver.arrivals[i]!.endpoint === 'ceiling') receiver.arrivals.splice(i, 1);
  if (failed) throw new Error(`ceiling: ${failed} POSTs failed`);
  return rate;
}

async function main() {
  const repeat = repeatCount();
  console.log(
    `bench:webhooks-out on ${machine()}${repeat > 1 ? `, --repeat ${repeat}` : ''}; receiver down: ${DOWN_MODE === 'refuse' ? 'connections refused' : '503'}`,
  );
  const receiver = await startReceiverProcess({ downMode: DOWN_MODE });
  onStop(() => receiver.close());
  // Commit timestamps: each event's commit, where the target's latency starts (occurred_at is its transaction's start).
  const { sql, fake, worker, ...stack } = await startStack(
    { WEBHOOK_ALLOW_PRIVATE_URLS: 'true' },
    { track_commit_timestamp: 'on' },
  );
  const [tracking] = await sql<{ track_commit_timestamp: string }[]>`show track_commit_timestamp`;
  const commitsTracked = tracking!.track_commit_timestamp === 'on';
  if (!commitsTracked)
    console.log(
      'BENCH_DATABASE_URL: its server does not record commit timestamps (track_commit_timestamp = on, then a restart): commit → arrival is n/a, occurred_at (the transaction’s start) stands in',
    );
  const api = (path: string, body: unknown) => stack.api('POST', path, body);
  let failedChecks = 0;

  await repeatRuns(
    repeat,
    async (run) => {
      // --- Seed: a business, its number, staff, and enough new clients for every second of traffic. ---
      const clientsNeeded = Math.ceil(
        SMS_PER_SECOND * SECONDS + OUTAGE_SMS_PER_SECOND * (UP_BEFORE_SECONDS + DOWN_SECONDS + UP_AFTER_SECONDS) + 200,
      );
      const number = `+1415555${String(run).padStart(4, '0')}`;
      const [business] = await sql<{ id: number }[]>`
        insert into businesses (name, sending_window_start, sending_window_end) values (${`Outgoing Bench ${run}`}, 0, 1440) returning id`;
      const businessId = business!.id;
      await sql`insert into business_sms_numbers (business_id, phone_number, is_default) values (${businessId}, ${number}, true)`;
      const clients = await sql<{ id: number; phone: string }[]>`
        insert into clients (business_id, name, phone_number, client_type)
        select ${businessId}, 'Client ' || g, '+1415' || lpad((2000000 + ${(run - 1) * 20_000} + g)::text, 7, '0'), 'returning'
        from generate_series(1, ${clientsNeeded}) g returning id, phone_number as phone`;
      clients.sort((a, b) => a.id - b.id);
      const staff = (
        await sql<{ id: number }[]>`
          insert into staff (business_id, name, role) select ${businessId}, 'Staff ' || g, 'staff' from generate_series(1, 5) g returning id`
      ).map((s) => s.id);
      console.log(`seeded business ${businessId}: ${clients.length} clients, ${staff.length} staff`);

      // --- Endpoints, over REST. ---
      for (const [key, types] of [
        ['all', undefined],
        ['conversations', SUBSET_TYPES],
      ] as const) {
        const endpoint = await api(`/businesses/${businessId}/webhook-endpoints`, {
          url: `${receiver.url}/${run}-${key}`,
          ...(types && { event_types: types }),
          description: `bench ${key}`,
        });
        await receiver.addEndpoint(`${run}-${key}`, String(endpoint.secret));
      }

      // --- Traffic: one tick a second. ---
      let nextClient = 0;
      const returnedAt = new Map<string, number>();
      const inboundSids = new Map<string, number>();
      let awaitingCallback: number[] = [];
      const conversations: { id: number; clientIndex: number }[] = [];
      let lastConversationId = 0;
      let assignNext = 0;
      let resolveNext = 0;
      let inboundSeq = 0;
      let ticksLate = 0;
      const clientIndex = new Map(clients.map((c, i) => [c.id, i]));

      const tick = async (smsCount: number) => {
        const n = Math.min(smsCount, clients.length - nextClient);
        const batch = clients.slice(nextClient, nextClient + n);
        nextClient += n;
        const jobs: (() => Promise<void>)[] = [];
        if (batch.length) {
          jobs.push(async () => {
            const answer = await api(`/businesses/${businessId}/sms`, {
              sender_type: 'system',
              category: 'reminder',
              messages: batch.map((c, i) => ({ client_id: c.id, message: `Bench ${run}: appointment ${i} confirmed.` })),
            });
            const t = now();
            const ids = answer.message_ids as number[];
            for (const id of ids) returnedAt.set(`message.created:${id}`, t);
            for (const c of batch) returnedAt.set(`conversation.created:${c.id}`, t);
            awaitingCallback.push(...ids);
          });
        }
        // The texts sent since: their `delivered` callbacks, signed as Twilio signs them.
        const sent = awaitingCallback.length
          ? await sql<{ id: number; sid: string }[]>`
              select id, provider_message_id as sid from messages where id = any(${awaitingCallback}) and status = 'sent'`
          : [];
        const sentIds = new Set(sent.map((s) => s.id));
        awaitingCallback = awaitingCallback.filter((id) => !sentIds.has(id));
        for (const s of sent)
          jobs.push(async () => {
            const [result] = await fake.sendStatusCallbacks(s.sid, ['delivered']);
            if (result!.status !== 200) throw new Error(`status callback answered ${result!.status}`);
            returnedAt.set(`message.status_updated:${s.id}`, now());
          });
        // Conversations opened so far: inbound texts, assignments and resolutions go to them.
        const opened = await sql<{ id: number; client_id: number }[]>`
          select id, client_id from conversations where business_id = ${businessId} and id > ${lastConversationId} order by id`;
        for (const c of opened) conversations.push({ id: c.id, clientIndex: clientIndex.get(c.client_id)! });
        lastConversationId = opened.at(-1)?.id ?? lastConversationId;
        if (conversations.length) {
          for (let i = 0; i < Math.round(smsCount * INBOUND_SHARE); i++) {
            const conversation = conversations[Math.floor(Math.random() * conversations.length)]!;
            const sid = inboundSid(`bench${run}`, ++inboundSeq);
            jobs.push(async () => {
              const status = await stack.inboundSms({
                sid,
                from: clients[conversation.clientIndex]!.phone,
                to: number,
                body: `Thanks, see you then (${inboundSeq})`,
              });
              if (status !== 200) throw new Error(`inbound SMS answered ${status}`);
              inboundSids.set(sid, now());
            });
          }
          // Each conversation assigned once and resolved once a run, so an event maps to its request.
          for (let i = 0; i < Math.round(smsCount * ASSIGN_SHARE) && assignNext < conversations.length; i++) {
            const conversation = conversations[assignNext++]!;
            jobs.push(async () => {
              await api(`/businesses/${businessId}/conversations/${conversation.id}/assign`, {
                staff_id: staff[conversation.id % staff.length],
              });
              returnedAt.set(`conversation.assigned:${conversation.id}`, now());
            });
          }
          for (let i = 0; i < Math.round(smsCount * RESOLVE_SHARE) && resolveNext < conversations.length; i++) {
            const conversation = conversations[resolveNext++]!;
            jobs.push(async () => {
              await api(`/businesses/${businessId}/conversations/${conversation.id}/status`, {
                status: 'resolved',
                staff_id: staff[0],
              });
              returnedAt.set(`conversation.status_changed:${conversation.id}`, now());
            });
          }
        }
        await pool(jobs, 16, (job) => job());
      };
      // By the clock, not by ticks: on a loaded machine a tick can take longer than its second, and
      // the outage must last DOWN_SECONDS of wall time. A late tick is counted and the next starts
      // at once (the offered rate then falls, and the printed offered rate says so).
      const traffic = async (
        seconds: number,
        smsPerSecond: number,
        at: { second: number; run: () => Promise<void> }[] = [],
        until = () => false,
      ) => {
        const t0 = now();
        const actions = [...at];
        for (let s = 0; now() < t0 + seconds * 1000 && !until(); s++) {
          while (actions.length && now() >= t0 + actions[0]!.second * 1000) await actions.shift()!.run();
          const due = t0 + s * 1000;
          if (now() > due + 1000) ticksLate++;
          else await sleep(Math.max(0, due - now()));
          await tick(smsPerSecond);
        }
        for (const a of actions) await a.run();
      };
      /** What the pending deliveries are waiting for: attempts made, the last error, when the next is due. */
      const pendingBreakdown = async () => {
        const rows = await sql<{ attempts: number; error: string | null; n: number; due_min: number; due_max: number }[]>`
          select attempts, split_part(last_error, ':', 1) as error, count(*)::int as n,
                 extract(epoch from min(next_attempt_at) - now())::float8 as due_min,
                 extract(epoch from max(next_attempt_at) - now())::float8 as due_max
          from webhook_deliveries where business_id = ${businessId} and status = 'pending'
          group by 1, 2 order by 1, 2`;
        for (const r of rows)
          console.log(
            `    ${String(r.n).padStart(6)} after ${r.attempts} attempts (${r.error ?? 'none yet'}), next due in ${fmt(r.due_min, 0)}…${fmt(r.due_max, 0)} s`,
          );
      };
      const pendingCount = async () =>
        (
          await sql<{ n: number }[]>`
            select count(*)::int as n from webhook_deliveries where business_id = ${businessId} and status = 'pending'`
        )[0]!.n;
      /** Every event of the business dispatched (a delivery made for each that an endpoint takes) and every delivery done. */
      const behindAndPending = () => sql`
        select (select count(*)::int from events e where e.business_id = ${businessId}
                  and (e.tx_id, e.id) > (select tx_id, event_id from event_handler_cursors where handler = 'outgoing-webhooks')) as behind,
               (select count(*)::int from webhook_deliveries where business_id = ${businessId} and status = 'pending') as pending`;
      const settled = async () => {
        const [r] = await sql<{ behind: number; pending: number }[]>`${behindAndPending()}`;
        return r!.behind === 0 && r!.pending === 0;
      };

      // Warm-up, not counted: a small request through the whole path.
      await tick(50);
      if (!(await waitUntil(settled, 60_000, 100))) throw new Error('warm-up deliveries did not finish');
      await receiver.sync();
      const ceiling = await ceilingRate(receiver);

      // --- Phase 1: throughput and latency. ---
      const loadBefore = os.loadavg()[0]!;
      const cpuAtStart = cpuSeconds(worker.pid);
      const p1Start = now();
      const offeredBefore = receiver.arrivals.length;
      // This process's event loop: the receiver answers in it, beside the traffic generator.
      await receiver.sync();
      const receiverCpuAtStart = receiver.cpuSeconds;
      const loopDelay = monitorEventLoopDelay({ resolution: 10 });
      loopDelay.enable();
      await traffic(SECONDS, SMS_PER_SECOND);
      loopDelay.disable();
      const p1End = now();
      const cpuAtEnd = cpuSeconds(worker.pid);
      await receiver.sync();
      const receiverCpu = receiver.cpuSeconds - receiverCpuAtStart;
      const pendingAtEnd = await pendingCount();
      const drained = await waitUntil(settled, 120_000, 100);
      await receiver.sync();
      const drainEnd = now();
      const cpuAfterDrain = cpuSeconds(worker.pid);
      const drainSeconds = (drainEnd - p1End) / 1000;
      // The worker's own capacity: the backlog left at the end of traffic delivered with the traffic
      // stopped (on 2 shared cores the traffic itself cannot offer 1,000 deliveries/s while it runs).
      const drainedArrivals = receiver.arrivals.filter((a) => a.at > p1End && a.at <= drainEnd).length;
      const drainRate = drainedArrivals >= 500 ? drainedArrivals / drainSeconds : NaN;
      // The worker's CPU per delivery: during the traffic (it also sends the SMS) and while it drains
      // the backlog afterwards (webhooks alone: a cost that the machine's load hardly changes).
      const p1Arrivals = receiver.arrivals.filter((a) => a.at >= p1Start && a.at <= p1End).length;
      const cpuPerDeliveryTraffic = ((cpuAtEnd - cpuAtStart) * 1000) / p1Arrivals;
      const cpuPerDeliveryDrain = drainedArrivals >= 500 ? ((cpuAfterDrain - cpuAtEnd) * 1000) / drainedArrivals : NaN;
      const p1 = receiver.arrivals.slice(offeredBefore).filter((a) => a.occurredAt >= p1Start - 50 && a.occurredAt <= p1End);
      const windowStart = p1Start + WARMUP_SECONDS * 1000;
      const inWindow = receiver.arrivals.filter((a) => a.at >= windowStart && a.at <= p1End).length;
      const rate = inWindow / ((p1End - windowStart) / 1000);
      const [offered] = await sql<{ n: number }[]>`
        select count(*)::int as n from webhook_deliveries
        where business_id = ${businessId} and (payload->>'timestamp')::timestamptz between to_timestamp(${windowStart / 1000}) and to_timestamp(${p1End / 1000})`;
      const offeredRate = offered!.n / ((p1End - windowStart) / 1000);
      const sinceOccurred = p1.map((a) => a.at - a.occurredAt);
      // Each event's commit (track_commit_timestamp): the start of the target's latency.
      const commits = commitsTracked
        ? await sql<{ id: string; committed: number }[]>`
            select id::text, extract(epoch from pg_xact_commit_timestamp(xmin))::float8 * 1000 as committed
            from events where business_id = ${businessId} and occurred_at >= to_timestamp(${(p1Start - 1000) / 1000})`
        : [];
      const committedAt = new Map(commits.map((r) => [r.id, r.committed]));
      const sinceCommit = p1.flatMap((a) => {
        const committed = committedAt.get(a.id);
        return committed === undefined ? [] : [a.at - committed];
      });
      /** Where an event's latency starts: its commit, or (not recorded) its transaction's start. */
      const startOf = (a: Arrival) => committedAt.get(a.id) ?? a.occurredAt;
      const from = commitsTracked ? 'commit' : 'occurred_at';
      // Inbound texts: their message ids, by the MessageSid each request carried.
      const inboundIds = await sql<{ id: number; sid: string }[]>`
        select id, provider_message_id as sid from messages where provider_message_id = any(${[...inboundSids.keys()]})`;
      for (const r of inboundIds) returnedAt.set(`message.received:${r.id}`, inboundSids.get(r.sid)!);
      const sinceReturned = p1.flatMap((a) => {
        const key = causeKey(a.type, a.data);
        const t = key === null ? undefined : returnedAt.get(key);
        return t === undefined ? [] : [a.at - t];
      });
      // Where the time goes: the event → the dispatcher's round that made its delivery (the row's
      // created_at is that transaction's start), and that round → the receiver (claim, POST).
      const made = await sql<{ key: string; created: number; post_ms: number | null }[]>`
        select substr(w.url, ${receiver.url.length + 2}) || ':' || d.event_id as key,
               extract(epoch from d.created_at)::float8 * 1000 as created, d.last_duration_ms as post_ms
        from webhook_deliveries d join webhook_endpoints w on w.id = d.endpoint_id
        where d.business_id = ${businessId} and d.created_at >= to_timestamp(${(p1Start - 1000) / 1000})`;
      const createdAt = new Map(made.map((r) => [r.key, r.created]));
      // The worker's POST as it timed it (from the call: a free connection of the agent, the
      // receiver's answer): where the receiver (this process, on the same cores) is slow, it is here.
      const postMs = made.flatMap((r) => (r.post_ms === null ? [] : [r.post_ms]));
      const toDispatched: number[] = [];
      const toReceiver: number[] = [];
      for (const a of p1) {
        const created = createdAt.get(`${a.endpoint}:${a.id}`);
        if (created === undefined) continue;
        toDispatched.push(created - startOf(a));
        toReceiver.push(a.at - created);
      }
      const lat = (v: number[], p: number) => percentile(v, p);
      console.log(
        `\nphase 1: ${SECONDS} s of traffic (${SMS_PER_SECOND} SMS/s and the rest)${ticksLate ? `, ${ticksLate} ticks late` : ''}; load average ${fmt(loadBefore, 2)} before, ${fmt(os.loadavg()[0]!, 2)} after`,
      );
      console.log(
        `  deliveries accepted/s, window ${WARMUP_SECONDS}–${SECONDS} s   ${fmt(rate, 0)}/s (offered ${fmt(offeredRate, 0)}/s; ceiling, POST → receiver without DB ${fmt(ceiling, 0)}/s)`,
      );
      console.log(
        `  pending at the end of traffic          ${pendingAtEnd}; all delivered ${fmt(drainSeconds)} s later${drained ? '' : ' (timed out)'} (${fmt(drainRate, 0)}/s)`,
      );
      console.log(
        `  worker CPU                             ${fmt(((cpuAtEnd - cpuAtStart) / ((p1End - p1Start) / 1000)) * 100, 0)}% of a core during traffic (${fmt(cpuPerDeliveryTraffic, 2)} ms per delivery, SMS sending included); ${fmt(cpuPerDeliveryDrain, 2)} ms per delivery draining${drainedArrivals >= 500 ? '' : ' (too few to time)'}`,
      );
      console.log(
        `  arrival − occurred_at (${p1.length})       p50 ${fmt(median(sinceOccurred), 0)} ms, p95 ${fmt(lat(sinceOccurred, 95), 0)} ms, p99 ${fmt(lat(sinceOccurred, 99), 0)} ms, max ${fmt(Math.max(...sinceOccurred), 0)} ms`,
      );
      console.log(
        `  arrival − commit (${sinceCommit.length})            p50 ${fmt(median(sinceCommit), 0)} ms, p95 ${fmt(lat(sinceCommit, 95), 0)} ms, p99 ${fmt(lat(sinceCommit, 99), 0)} ms, max ${fmt(Math.max(...sinceCommit), 0)} ms`,
      );
      console.log(
        `  of which ${from.padEnd(11)} → dispatched       p50 ${fmt(median(toDispatched), 0)} ms, p95 ${fmt(lat(toDispatched, 95), 0)} ms; dispatched → arrival p50 ${fmt(median(toReceiver), 0)} ms, p95 ${fmt(lat(toReceiver, 95), 0)} ms (the worker's POST p50 ${fmt(median(postMs), 0)} ms, p95 ${fmt(lat(postMs, 95), 0)} ms)`,
      );
      printBreakdown(p1, createdAt, startOf);
      console.log(
        `  the receiver's CPU                     ${fmt((receiverCpu / ((p1End - p1Start) / 1000)) * 100, 0)}% of a core during traffic, ${fmt((receiverCpu * 1000) / p1Arrivals, 2)} ms per request (its own process: HTTP, signature, JSON)`,
      );
      console.log(
        `  the bench's event loop (the traffic generator; the receiver has its own) delay p50 ${fmt(loopDelay.percentile(50) / 1e6, 0)} ms, p99 ${fmt(loopDelay.percentile(99) / 1e6, 0)} ms, max ${fmt(loopDelay.max / 1e6, 0)} ms`,
      );
      console.log(
        `  arrival − request returned (${sinceReturned.length})  p50 ${fmt(median(sinceReturned), 0)} ms, p95 ${fmt(lat(sinceReturned, 95), 0)} ms, p99 ${fmt(lat(sinceReturned, 99), 0)} ms`,
      );

      // --- Phase 1b: the sustained rate, under traffic. The receiver holds its answers for
      // HOLD_SECONDS while the traffic goes on (a backlog builds; nothing fails: each answer comes
      // within 12 s), then answers everything at once while the traffic goes on: the rate at which the
      // worker delivers the backlog and the new events until it has caught up is what it sustains
      // beside the traffic (the traffic alone cannot offer 1,000/s on 2 shared cores).
      await receiver.hold();
      await traffic(HOLD_SECONDS, SMS_PER_SECOND);
      const [held] = await sql<{ behind: number; pending: number }[]>`${behindAndPending()}`;
      const releasedAt = now();
      const releasedArrivals = receiver.arrivals.length;
      await receiver.release();
      let caughtUpAt = NaN;
      let trafficOver = false;
      await Promise.all([
        // Until caught up and a few seconds more (what the last ticks offer is delivered as it comes).
        traffic(CAPACITY_SECONDS, SMS_PER_SECOND, [], () => now() > caughtUpAt + 3_000).finally(() => (trafficOver = true)),
        (async () => {
          // Caught up: what waits (undispatched events and pending deliveries) is back to under a second's worth.
          while (!trafficOver) {
            const [r] = await sql<{ behind: number; pending: number }[]>`${behindAndPending()}`;
            if (r!.behind + r!.pending <= CAUGHT_UP_BELOW) {
              caughtUpAt = now();
              return;
            }
            await sleep(100);
          }
        })(),
      ]);
      await receiver.sync();
      const sustainedArrivals = receiver.arrivals
        .slice(releasedArrivals)
        .filter((a) => a.at > releasedAt && a.at <= caughtUpAt).length;
      const sustainedRate = sustainedArrivals / ((caughtUpAt - releasedAt) / 1000);
      if (!(await waitUntil(settled, 120_000, 100))) throw new Error('the held backlog was not delivered');
      console.log(
        `\nphase 1b: the receiver held its answers ${HOLD_SECONDS} s under traffic, then answered at once while the traffic went on (until caught up, at most ${CAPACITY_SECONDS} s)`,
      );
      console.log(
        `  backlog at release                     ${held!.behind} events not dispatched, ${held!.pending} deliveries pending`,
      );
      console.log(
        Number.isFinite(caughtUpAt)
          ? `  caught up ${fmt((caughtUpAt - releasedAt) / 1000)} s after release: ${sustainedArrivals} deliveries, ${fmt(sustainedRate, 0)}/s sustained under traffic`
          : `  not caught up while the traffic went on (${CAPACITY_SECONDS} s)`,
      );

      // --- Phase 2: the receiver down for DOWN_SECONDS while traffic goes on, then back. ---
      let downAt = 0;
      let backAt = 0;
      const p2Start = receiver.arrivals.length;
      await traffic(UP_BEFORE_SECONDS + DOWN_SECONDS + UP_AFTER_SECONDS, OUTAGE_SMS_PER_SECOND, [
        {
          second: UP_BEFORE_SECONDS,
          run: async () => {
            await receiver.goDown();
            downAt = now();
            console.log(`\nphase 2: receiver down (${DOWN_MODE === 'refuse' ? 'refusing connections' : 'answering 503'})`);
          },
        },
        {
          second: UP_BEFORE_SECONDS + DOWN_SECONDS,
          run: async () => {
            const [due] = await sql<{ pending: number; later: number }[]>`
              select count(*)::int as pending, count(*) filter (where next_attempt_at > now() + interval '60 seconds')::int as later
              from webhook_deliveries where business_id = ${businessId} and status = 'pending'`;
            console.log(`  at the end of the outage: ${due!.pending} pending, ${due!.later} of them not due for more than 60 s:`);
            await pendingBreakdown();
            await receiver.comeBack();
            backAt = now();
            console.log(`  receiver back after ${fmt((backAt - downAt) / 1000)} s`);
          },
        },
      ]);
      const trafficEnd = now();
      const allByItself = await waitUntil(settled, RECOVERY_WAIT_SECONDS * 1000, 200);
      const afterBack = (now() - backAt) / 1000;
      const [left] = await sql<{ pending: number; last_due: number | null; conversations: number }[]>`
        select count(*)::int as pending, extract(epoch from max(next_attempt_at))::float8 as last_due,
               count(distinct conversation_id)::int as conversations
        from webhook_deliveries where business_id = ${businessId} and status = 'pending'`;
      let recoverySeconds = allByItself ? afterBack : NaN;
      const projected = left!.last_due ? left!.last_due - backAt / 1000 : NaN;
      if (allByItself) {
        console.log(`  every event delivered ${fmt(afterBack)} s after the receiver came back`);
      } else {
        console.log(
          `  ${fmt(afterBack)} s after it came back (${fmt((now() - trafficEnd) / 1000)} s after the traffic): ${left!.pending} deliveries still pending in ${left!.conversations} conversations; the last is due ${fmt(projected)} s after the receiver came back`,
        );
        await pendingBreakdown();
        if (REAL_WAIT) {
          await waitUntil(settled, 900_000, 500);
          recoverySeconds = (now() - backAt) / 1000;
          console.log(`  every event delivered ${fmt(recoverySeconds)} s after the receiver came back (waited for real)`);
        } else {
          recoverySeconds = projected;
          // The schedule's clock set forward: what was left is due now (leases, ≤ 60 s away, are left alone).
          await sql`update webhook_deliveries set next_attempt_at = now()
                    where business_id = ${businessId} and status = 'pending' and next_attempt_at > now() + interval '60 seconds'`;
          const t = now();
          const done = await waitUntil(settled, 120_000, 200);
          console.log(
            `  retry schedule set forward (BENCH_REAL_WAIT=1 waits instead): the rest delivered in ${fmt((now() - t) / 1000)} s${done ? '' : ' (timed out)'}`,
          );
        }
      }
      await receiver.sync();
      const p2After = receiver.arrivals.slice(p2Start).filter((a) => a.occurredAt >= backAt);
      const sinceBack = p2After.map((a) => a.at - a.occurredAt);

      // --- Checks over the whole run: every event delivered, in order, once. ---
      const runArrivals = receiver.arrivals.filter((a) => a.endpoint.startsWith(`${run}-`));
      const expected = await sql<{ endpoint: string; ids: string[] }[]>`
        select w.url as endpoint, array_agg(e.id::text) as ids from webhook_endpoints w
        join events e on e.business_id = w.business_id and e.occurred_at >= w.created_at
          and (w.event_types is null or e.type = any(w.event_types))
        where w.business_id = ${businessId} group by w.url`;
      let missing = 0;
      let duplicates = 0;
      let outOfOrder = 0;
      let gaps = 0;
      for (const row of expected) {
        const endpoint = row.endpoint.slice(receiver.url.length + 1);
        const got = runArrivals.filter((a) => a.endpoint === endpoint);
        const ids = new Set(got.map((a) => a.id));
        duplicates += got.length - ids.size;
        const notReceived = row.ids.filter((id) => !ids.has(id));
        missing += notReceived.length;
        if (got.length > ids.size || notReceived.length) {
          const seen = new Map<string, Arrival[]>();
          for (const a of got) seen.set(a.id, [...(seen.get(a.id) ?? []), a]);
          const twice = [...seen.values()].filter((v) => v.length > 1);
          console.log(`  ${endpoint}: ${notReceived.length} missing, e.g. ${notReceived.slice(0, 5).join(', ')}`);
          for (const v of twice.slice(0, 3)) console.log(`    twice: ${JSON.stringify(v)}`);
          const rows = await sql`
            select d.event_id, d.event_type, d.status, d.attempts, d.last_status_code, d.last_error, e.type, e.conversation_id
            from events e left join webhook_deliveries d on d.event_id = e.id and d.business_id = e.business_id
            where e.id = any(${notReceived.slice(0, 5)}::bigint[]) and e.business_id = ${businessId}`;
          for (const r of rows) console.log(`    missing: ${JSON.stringify(r)}`);
        }
        const byConversation = new Map<number, number[]>();
        for (const a of got)
          if (a.conversationId !== null && a.sequence !== null)
            byConversation.set(a.conversationId, [...(byConversation.get(a.conversationId) ?? []), a.sequence]);
        for (const sequences of byConversation.values()) {
          for (let i = 1; i < sequences.length; i++) if (sequences[i]! <= sequences[i - 1]!) outOfOrder++;
          // The endpoint of every type sees each conversation's numbers without a gap, from 1.
          if (endpoint.endsWith('-all') && sequences.some((s, i) => s !== i + 1)) gaps++;
        }
      }
      const undelivered = await pendingCount();
      const ok = missing === 0 && duplicates === 0 && outOfOrder === 0 && gaps === 0 && receiver.badSignatures === 0;
      if (!ok) failedChecks++;
      console.log(
        `  events after the receiver came back (${sinceBack.length}): arrival − occurred_at p50 ${fmt(median(sinceBack), 0)} ms, p95 ${fmt(percentile(sinceBack, 95), 0)} ms`,
      );
      console.log(
        `  checks: ${runArrivals.length} deliveries accepted, ${missing} events missing, ${undelivered} still pending, ${duplicates} duplicate webhook-ids, ${outOfOrder} out of order, ${gaps} conversations with a gap, ${receiver.badSignatures} bad signatures`,
      );

      const p95 = percentile(sinceCommit, 95);
      const figures: Figure[] = [
        {
          name: 'deliveries accepted/s (steady window)',
          value: rate,
          unit: '/s',
          digits: 0,
          ceiling: { name: 'POST → receiver, no DB', value: ceiling },
          target: 'keeping up (≥ 95% of offered)',
          ok: rate >= 0.95 * offeredRate,
        },
        { name: 'deliveries offered/s (same window)', value: offeredRate, unit: '/s', digits: 0 },
        {
          name: 'deliveries/s sustained under traffic (phase 1b)',
          value: sustainedRate,
          unit: '/s',
          digits: 0,
          ceiling: { name: 'POST → receiver, no DB', value: ceiling },
          target: '≥ 1,000/s',
          ok: sustainedRate >= 1000,
        },
        {
          name: 'deliveries/s draining the backlog after traffic',
          value: drainRate,
          unit: '/s',
          digits: 0,
          ceiling: { name: 'POST → receiver, no DB', value: ceiling },
        },
        {
          name: 'arrival − commit p50',
          value: median(sinceCommit),
          unit: 'ms',
          digits: 0,
          lowerIsBetter: true,
        },
        {
          name: 'arrival − commit p95',
          value: p95,
          unit: 'ms',
          digits: 0,
          lowerIsBetter: true,
          target: '≤ 500 ms',
          ok: p95 <= 500,
        },
        {
          name: `of which ${from} → dispatched p95`,
          value: percentile(toDispatched, 95),
          unit: 'ms',
          digits: 0,
          lowerIsBetter: true,
        },
        {
          name: 'of which dispatched → arrival p95',
          value: percentile(toReceiver, 95),
          unit: 'ms',
          digits: 0,
          lowerIsBetter: true,
        },
        { name: 'arrival − commit p99', value: percentile(sinceCommit, 99), unit: 'ms', digits: 0, lowerIsBetter: true },
        {
          name: 'arrival − occurred_at p95 (from the transaction’s start)',
          value: percentile(sinceOccurred, 95),
          unit: 'ms',
          digits: 0,
          lowerIsBetter: true,
        },
        { name: 'of which the worker’s POST p95', value: percentile(postMs, 95), unit: 'ms', digits: 0, lowerIsBetter: true },
        { name: 'arrival − request returned p50', value: median(sinceReturned), unit: 'ms', digits: 0, lowerIsBetter: true },
        {
          name: 'arrival − request returned p95',
          value: percentile(sinceReturned, 95),
          unit: 'ms',
          digits: 0,
          lowerIsBetter: true,
        },
        {
          name: `outage ${DOWN_SECONDS} s: all delivered after back${allByItself || REAL_WAIT ? '' : ' (projected)'}`,
          value: recoverySeconds,
          unit: 's',
          digits: 1,
          lowerIsBetter: true,
          target: '≤ 60 s (ours)',
          ok: recoverySeconds <= 60,
        },
        {
          name: 'missing + duplicated + out of order + gaps',
          value: missing + duplicates + outOfOrder + gaps,
          unit: '',
          digits: 0,
          target: '0',
          ok,
        },
        {
          name: 'worker CPU per delivery during traffic (SMS sending included)',
          value: cpuPerDeliveryTraffic,
          unit: 'ms',
          digits: 2,
          lowerIsBetter: true,
        },
        {
          name: 'worker CPU per delivery draining the backlog',
          value: cpuPerDeliveryDrain,
          unit: 'ms',
          digits: 2,
          lowerIsBetter: true,
        },
        { name: 'load average (1 min) before phase 1', value: loadBefore, unit: '', digits: 2 },
      ];
      return figures;
    },
    'bench:webhooks-out',
  );

  return failedChecks === 0 ? 0 : 1;
}

runBench(main);

/**
 * Where the time goes, by kind of delivery: per event type, and for a conversation's next event (the
 * endpoint's previous delivery of the conversation made in an earlier round, under 2 s before:
 * it waits for that one's outcome) against the rest. p50/p95 of the event's commit (or occurred_at)
 * → dispatched and dispatched → arrival, in ms.
 */
function printBreakdown(arrivals: Arrival[], createdAt: Map<string, number>, startOf: (a: Arrival) => number) {
  const previous = new Map<string, number>();
  const groups = new Map<string, { toDispatched: number[]; toReceiver: number[] }>();
  const add = (group: string, toDispatched: number, toReceiver: number) => {
    const g = groups.get(group) ?? { toDispatched: [], toReceiver: [] };
    g.toDispatched.push(toDispatched);
    g.toReceiver.push(toReceiver);
    groups.set(group, g);
  };
  const ordered = [...arrivals].sort((a, b) => (a.sequence ?? 0) - (b.sequence ?? 0));
  for (const a of ordered) {
    const created = createdAt.get(`${a.endpoint}:${a.id}`);
    if (created === undefined) continue;
    add(`  ${a.type}`, created - startOf(a), a.at - created);
    if (a.conversationId === null) continue;
    const key = `${a.endpoint}:${a.conversationId}`;
    const before = previous.get(key);
    previous.set(key, created);
    const follows = before !== undefined && before < created && created - before < 2_000;
    add(follows ? 'next event of a conversation' : 'first, or with its predecessor', created - startOf(a), a.at - created);
  }
  console.log('  breakdown (ms)                           n   →dispatched p50/p95   dispatched→arrival p50/p95');
  for (const [group, g] of [...groups].sort()) {
    console.log(
      `    ${group.padEnd(36)} ${String(g.toDispatched.length).padStart(5)}   ${fmt(median(g.toDispatched), 0).padStart(6)} / ${fmt(percentile(g.toDispatched, 95), 0).padStart(6)}   ${fmt(median(g.toReceiver), 0).padStart(6)} / ${fmt(percentile(g.toReceiver, 95), 0).padStart(6)}`,
    );
  }
}
