import { fmt, median, percentile, repeatCount, repeatRuns, sleep, waitUntil, type Figure } from './harness';
import { now } from './receiver';
import { inboundSid, machine, onStop, runBench, startStack } from './stack';

/**
 * `npm run bench:assign [-- --repeat N]`: auto-assignment (docs/api.md#auto-assignment) end to end.
 * The production web server and ONE worker; a business with `round_robin`, BENCH_STAFF (50) staff
 * and the default capacity (10); this process plays Twilio and the front desk.
 *
 * Phase 1 (inbound): BENCH_TEXTS_PER_MINUTE (1,000) signed inbound texts a minute from new clients
 * for BENCH_SECONDS (60), each opening a conversation; staff answer each conversation
 * BENCH_REPLY_AFTER_SECONDS (10) after it was assigned (a reply over REST, which ends its waiting and
 * so gives its assignee room). Measured: for each text, from the moment its webhook answered 200
 * (the message is stored and committed) to the moment this process first sees the conversation
 * assigned (a poll every 50 ms: the figure is an upper bound by up to that much); the spread of
 * round robin (most and fewest conversations given to one staff member); and a recount every
 * 200 ms of each staff member's conversations waiting for their reply against their capacity.
 *
 * Phase 2 (campaign): BENCH_CAMPAIGN (10,000) texts to new clients over REST, in requests of 1,000
 * (an API campaign: replies by the waiting rule, since they are not the system's), then until the
 * worker's assignment handler has read past every event they made. Measured: assignments and
 * assignment jobs made meanwhile (0 expected), and how long the handler took to read past them.
 * Exits 1 when a check fails.
 */
const SECONDS = Number(process.env.BENCH_SECONDS ?? 60);
const PER_MINUTE = Number(process.env.BENCH_TEXTS_PER_MINUTE ?? 1000);
const STAFF = Number(process.env.BENCH_STAFF ?? 50);
const REPLY_AFTER_SECONDS = Number(process.env.BENCH_REPLY_AFTER_SECONDS ?? 10);
const CAMPAIGN = Number(process.env.BENCH_CAMPAIGN ?? 10_000);
const CAPACITY = 10;
const POLL_MS = 50;

async function main() {
  const repeat = repeatCount();
  console.log(`bench:assign on ${machine()}${repeat > 1 ? `, --repeat ${repeat}` : ''}`);
  const { sql, api, inboundSms } = await startStack();
  let failedChecks = 0;

  await repeatRuns(
    repeat,
    async (run) => {
      // --- Seed: a business with round robin over its staff, its number, and new clients. ---
      const texts = Math.round((PER_MINUTE * SECONDS) / 60);
      const number = `+1415556${String(run).padStart(4, '0')}`;
      const [business] = await sql<{ id: number }[]>`
        insert into businesses (name, sending_window_start, sending_window_end) values (${`Assign Bench ${run}`}, 0, 1440) returning id`;
      const businessId = business!.id;
      await api('PUT', `/businesses/${businessId}/assignment`, {
        assignment_policy: 'round_robin',
        assignment_capacity: CAPACITY,
      });
      await sql`insert into business_sms_numbers (business_id, phone_number, is_default) values (${businessId}, ${number}, true)`;
      const clients = await sql<{ id: number; phone: string }[]>`
        insert into clients (business_id, name, phone_number, client_type)
        select ${businessId}, 'Client ' || g, '+1415' || lpad((3000000 + ${(run - 1) * 40_000} + g)::text, 7, '0'), 'returning'
        from generate_series(1, ${texts + CAMPAIGN}) g returning id, phone_number as phone`;
      clients.sort((a, b) => a.id - b.id);
      const staff = await sql<{ id: number }[]>`
        insert into staff (business_id, name, role) select ${businessId}, 'Staff ' || g, 'staff' from generate_series(1, ${STAFF}) g returning id`;
      console.log(
        `seeded business ${businessId}: ${clients.length} clients, ${staff.length} staff, round robin, capacity ${CAPACITY}`,
      );

      // --- Phase 1: inbound texts at an even pace, a poller for assignments, staff answering, a capacity recount. ---
      // BENCH_DIAGNOSE=1: each second, how far each handler of the log is behind and what the database waits on.
      const diagnose = process.env.BENCH_DIAGNOSE
        ? setInterval(() => {
            void sql<{ handler: string; behind: number }[]>`
              select c.handler, (select count(*)::int from events e where e.business_id = ${businessId}
                                   and (e.tx_id, e.id) > (c.tx_id, c.event_id)) as behind
              from event_handler_cursors c order by 1`.then(async (rows) => {
              const slow = await sql<{ age: string; wait: string | null; query: string }[]>`
                select (now() - xact_start)::text as age, wait_event_type || ':' || wait_event as wait, left(query, 90) as query
                from pg_stat_activity where datname = current_database() and state <> 'idle' and pid <> pg_backend_pid()
                  and now() - xact_start > interval '300 ms' order by xact_start limit 3`;
              console.log(
                `  ${rows.map((r) => `${r.handler} ${r.behind}`).join(', ')}${slow.map((q) => `\n    ${q.age} ${q.wait ?? ''} ${q.query}`).join('')}`,
              );
            });
          }, 1000)
        : undefined;
      onStop(async () => clearInterval(diagnose));
      const started = Date.now();
      const phaseEnd = started + SECONDS * 1000;
      const storedAt = new Map<number, number>(); // client id → when its webhook answered
      const assignedAt = new Map<number, number>();
      const replyDue: { clientId: number; at: number; staffId: number }[] = [];
      let overCapacity = 0;
      let maxWaiting = 0;
      let sending = true;
      const failures: string[] = [];
      const inbound = async (client: { id: number; phone: string }, seq: number) => {
        const status = await inboundSms({
          sid: inboundSid(`assign${run}`, seq),
          from: client.phone,
          to: number,
          body: 'Hi! Can I book?',
        });
        if (status !== 200) failures.push(`inbound answered ${status}`);
        else storedAt.set(client.id, now());
      };
      const poller = (async () => {
        while (sending || assignedAt.size < storedAt.size) {
          const pending = [...storedAt.keys()].filter((id) => !assignedAt.has(id));
          if (pending.length) {
            const rows = await sql<{ client_id: number; staff_id: number }[]>`
              select client_id, assigned_staff_id as staff_id from conversations
              where business_id = ${businessId} and assigned_staff_id is not null and client_id = any(${pending}::int[])`;
            const t = now();
            for (const r of rows) {
              assignedAt.set(r.client_id, t);
              replyDue.push({ clientId: r.client_id, at: t + REPLY_AFTER_SECONDS * 1000, staffId: r.staff_id });
            }
          }
          if (!sending && Date.now() > phaseEnd + 30_000) break;
          await sleep(POLL_MS);
        }
      })();
      const replier = (async () => {
        while (sending || replyDue.length) {
          const due = replyDue.filter((r) => r.at <= now());
          for (const r of due) replyDue.splice(replyDue.indexOf(r), 1);
          await Promise.all(
            due.map((r) =>
              api('POST', `/businesses/${businessId}/sms`, {
                sender_type: 'staff',
                staff_id: r.staffId,
                messages: [{ client_id: r.clientId, message: 'See you at 3!' }],
              }).catch((err: Error) => failures.push(err.message)),
            ),
          );
          if (!sending && (replyDue.length === 0 || Date.now() > phaseEnd + 60_000)) break;
          await sleep(200);
        }
      })();
      const recount = (async () => {
        while (sending) {
          const [row] = await sql<{ over: number; most: number }[]>`
            select count(*) filter (where n > ${CAPACITY})::int as over, coalesce(max(n), 0)::int as most from (
              select count(*) as n from conversations
              where business_id = ${businessId} and assigned_staff_id is not null and status = 'open' and waiting_since is not null
              group by assigned_staff_id) w`;
          overCapacity += row!.over;
          maxWaiting = Math.max(maxWaiting, row!.most);
          await sleep(200);
        }
      })();
      const sent: Promise<void>[] = [];
      for (let i = 0; i < texts; i++) {
        const at = started + (i * 60_000) / PER_MINUTE;
        if (at > Date.now()) await sleep(at - Date.now());
        sent.push(inbound(clients[i]!, i));
      }
      await Promise.all(sent);
      const lateBy = Date.now() - phaseEnd;
      await waitUntil(async () => assignedAt.size >= storedAt.size, 30_000, 100);
      sending = false;
      await Promise.all([poller, recount]);
      const latencies = [...assignedAt].map(([clientId, t]) => t - storedAt.get(clientId)!);
      const perStaff = await sql<{ staff_id: number; n: number }[]>`
        select s.id as staff_id, count(e.id)::int as n from staff s
        left join events e on e.business_id = s.business_id and e.type = 'conversation.assigned' and e.data->>'by' = 'auto'
          and (e.data->>'staff_id')::int = s.id
        where s.business_id = ${businessId} group by s.id`;
      const counts = perStaff.map((r) => r.n);
      // Sweep jobs made during the phase (retries after a sweep met a locked row, openings), done or not.
      const [phaseJobs] = await sql<{ n: number }[]>`
        select ((select count(*) from pgboss.job where name = 'assignment.sweep' and data->>'businessId' = ${String(businessId)})
              + (select count(*) from pgboss.archive where name = 'assignment.sweep' and data->>'businessId' = ${String(businessId)}))::int as n`;
      const slow = latencies.filter((l) => l > 1000).length;
      console.log(
        `phase 1: ${phaseJobs!.n} sweep jobs; ${slow} assignments over 1 s; latency deciles ${[10, 20, 30, 40, 50, 60, 70, 80, 90].map((p) => fmt(percentile(latencies, p), 0)).join(' ')} ms`,
      );
      const spread = Math.max(...counts) - Math.min(...counts);
      console.log(
        `phase 1: ${storedAt.size} texts stored (${failures.length} failures${lateBy > 1000 ? `, the sender ${fmt(lateBy / 1000)} s late` : ''}), ` +
          `${assignedAt.size} assigned; per staff ${Math.min(...counts)}–${Math.max(...counts)}; most waiting on one person ${maxWaiting}`,
      );
      await replier;

      // --- Phase 2: a campaign to new clients; the handler must read past it and assign nothing. ---
      const [before] = await sql<{ events: number; jobs: number; last: string }[]>`
        select (select count(*)::int from events where business_id = ${businessId} and type = 'conversation.assigned') as events,
               (select count(*)::int from pgboss.job where name = 'assignment.sweep' and data->>'businessId' = ${String(businessId)}) as jobs,
               (select coalesce(max(id), 0)::text from events) as last`;
      const campaign = clients.slice(texts, texts + CAMPAIGN);
      const campaignStart = now();
      for (let i = 0; i < campaign.length; i += 1000) {
        await api('POST', `/businesses/${businessId}/sms`, {
          sender_type: 'staff',
          category: 'reminder',
          messages: campaign
            .slice(i, i + 1000)
            .map((c) => ({ client_id: c.id, message: 'Spring offer: 20% off colour this week.' })),
        });
      }
      const [last] = await sql<{ last: string }[]>`select max(id)::text as last from events where business_id = ${businessId}`;
      const caughtUp = await waitUntil(
        async () => {
          const [behind] = await sql`
            select 1 from events e, event_handler_cursors c
            where c.handler = 'auto-assignment' and e.id > ${before!.last}::bigint and e.id <= ${last!.last}::bigint
              and (e.tx_id, e.id) > (c.tx_id, c.event_id) limit 1`;
          return !behind;
        },
        300_000,
        100,
      );
      const handlerSeconds = (now() - campaignStart) / 1000;
      const [after] = await sql<{ events: number; jobs: number }[]>`
        select (select count(*)::int from events where business_id = ${businessId} and type = 'conversation.assigned') as events,
               (select count(*)::int from pgboss.job where name = 'assignment.sweep' and data->>'businessId' = ${String(businessId)}) as jobs`;
      const campaignWork = after!.events - before!.events + (after!.jobs - before!.jobs);
      console.log(
        `phase 2: ${campaign.length} campaign texts; the assignment handler ${caughtUp ? 'read past them' : 'had NOT read past them'} ` +
          `${fmt(handlerSeconds)} s after the first request; assignments ${after!.events - before!.events}, sweep jobs ${after!.jobs - before!.jobs}`,
      );

      const p95 = percentile(latencies, 95);
      const checks = [
        failures.length === 0,
        assignedAt.size === storedAt.size && storedAt.size === texts,
        p95 <= 1000,
        spread <= 1,
        overCapacity === 0,
        caughtUp && campaignWork === 0,
      ];
      failedChecks += checks.filter((ok) => !ok).length;
      if (failures.length) console.log(`failures: ${failures.slice(0, 5).join('; ')}`);
      const figures: Figure[] = [
        {
          name: 'inbound texts stored',
          value: storedAt.size,
          unit: '',
          digits: 0,
          target: `${texts}`,
          ok: storedAt.size === texts,
        },
        {
          name: 'assigned',
          value: assignedAt.size,
          unit: '',
          digits: 0,
          target: 'all stored',
          ok: assignedAt.size === storedAt.size,
        },
        {
          name: 'assignment after the inbound is stored, p50',
          value: median(latencies),
          unit: 'ms',
          digits: 0,
          lowerIsBetter: true,
        },
        {
          name: 'assignment after the inbound is stored, p95',
          value: p95,
          unit: 'ms',
          digits: 0,
          lowerIsBetter: true,
          target: 'p95 ≤ 1000 ms',
          ok: p95 <= 1000,
        },
        {
          name: 'assignment after the inbound is stored, p99',
          value: percentile(latencies, 99),
          unit: 'ms',
          digits: 0,
          lowerIsBetter: true,
        },
        {
          name: 'round-robin spread (most − fewest per staff)',
          value: spread,
          unit: '',
          digits: 0,
          target: '≤ 1',
          ok: spread <= 1,
        },
        {
          name: 'recounts finding someone over capacity',
          value: overCapacity,
          unit: '',
          digits: 0,
          target: '0',
          ok: overCapacity === 0,
        },
        {
          name: 'campaign: assignments + sweep jobs',
          value: campaignWork,
          unit: '',
          digits: 0,
          target: '0',
          ok: caughtUp && campaignWork === 0,
        },
        { name: 'campaign: handler read past it after', value: handlerSeconds, unit: 's', lowerIsBetter: true },
      ];
      return figures;
    },
    'bench:assign',
  );

  return failedChecks === 0 ? 0 : 1;
}

runBench(main);
