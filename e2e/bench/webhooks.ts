import http from 'node:http';
import os from 'node:os';
import { getExpectedTwilioSignature } from 'twilio/lib/webhooks/webhooks';
import { createSql } from '@/db/connect';
import { benchDatabase, fmt, median, percentile, repeatCount, repeatRuns, startWebServer, type Figure } from './harness';

/**
 * `npm run bench:webhooks`: 20,000 signed Twilio SMS status callbacks (5,000 messages × queued,
 * sending, sent, delivered) in shuffled order plus 10% duplicates, from 32 concurrent senders,
 * against the production server. Beside it, the same server's bare route handler (constant JSON)
 * under the same load: the framework's ceiling. Then every message must hold `delivered`.
 * `-- --repeat N`: N runs in a row on the same server, each with 5,000 fresh messages of a business of
 * its own, then the median and spread of each figure (the target holds in every run, not on average).
 */
const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 5000);
const STATUSES = ['queued', 'sending', 'sent', 'delivered'];
const CONCURRENCY = 32;
/** How many alternating slices of bare requests and callbacks a run measures. */
const SLICES = 10;
const AUTH_TOKEN = 'bench-auth-token';

type Req = { method: 'GET' | 'POST'; path: string; body?: string; headers?: Record<string, string> };

function shuffle<T>(items: T[]): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}

async function load(
  base: string,
  requests: Req[],
): Promise<{ seconds: number; latencies: number[]; statuses: Map<number, number> }> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const url = new URL(base);
  const latencies: number[] = [];
  const statuses = new Map<number, number>();
  let next = 0;
  const one = (r: Req) =>
    new Promise<number>((resolve, reject) => {
      const req = http.request(
        {
          agent,
          host: url.hostname,
          port: url.port,
          method: r.method,
          path: r.path,
          headers: { ...r.headers, ...(r.body ? { 'content-length': Buffer.byteLength(r.body) } : {}) },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('error', reject);
      req.end(r.body);
    });
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < requests.length) {
        const r = requests[next++]!;
        const s = performance.now();
        const status = await one(r);
        latencies.push(performance.now() - s);
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  agent.destroy();
  return { seconds, latencies, statuses };
}

async function main() {
  const repeat = repeatCount();
  console.log(
    `bench:webhooks on ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown cpu'})${repeat > 1 ? `, --repeat ${repeat}` : ''}`,
  );
  const database = await benchDatabase();
  const sql = createSql(database.url, { max: 4 });

  const env = {
    ...process.env,
    DATABASE_URL: database.url,
    PLATFORM_API_KEY: 'bench-platform-key-0123456789',
    SESSION_SECRET: 'bench-session-secret-0123456789',
    TWILIO_AUTH_TOKEN: AUTH_TOKEN,
    LOG_LEVEL: 'warn',
  };
  // PUBLIC_BASE_URL must be the URL the callbacks are signed for; the server port is chosen first.
  const web = await startWebServer(env, (url) => ({ PUBLIC_BASE_URL: url }));
  const path = '/api/v1/webhooks/twilio/sms/status';
  const signedUrl = `${web.url}${path}`;
  let lostOrWrong = 0;

  await repeatRuns(
    repeat,
    async (run) => {
      // Each run its own business, number and messages: the callbacks of a run find every message at 'sending'.
      // The callbacks' From: the status statement looks the message up in the business owning that number.
      const fromNumber = `+1415555${String(run).padStart(4, '0')}`;
      const [business] = await sql<
        { id: number }[]
      >`insert into businesses (name) values (${`Webhook Bench ${run}`}) returning id`;
      const businessId = business!.id;
      await sql`insert into business_sms_numbers (business_id, phone_number, is_default) values (${businessId}, ${fromNumber}, true)`;
      await sql`
        insert into clients (business_id, name, phone_number, client_type)
        select ${businessId}, 'Client ' || g, '+1415' || lpad((3000000 + g)::text, 7, '0'), 'returning' from generate_series(1, ${MESSAGES}) g`;
      await sql`insert into conversations (business_id, client_id) select business_id, id from clients where business_id = ${businessId}`;
      await sql`
        insert into messages (business_id, conversation_id, client_id, channel, direction, message_type, sender_type, content, status, origin, provider, provider_message_id)
        select c.business_id, c.id, c.client_id, 'sms', 'outbound', 'TEXT', 'system', 'Your appointment is confirmed', 'sending', 'system', 'twilio',
               'SM' || lpad(to_hex(c.id), 32, '0')
        from conversations c where c.business_id = ${businessId}`;
      const sids = (
        await sql<{ sid: string }[]>`select provider_message_id as sid from messages where business_id = ${businessId}`
      ).map((r) => r.sid);
      console.log(`seeded ${sids.length} messages in status 'sending' (business ${businessId})`);
      const [{ n: eventsBefore }] =
        (await sql`select count(*)::int as n from webhook_events where kind = 'sms_status'`) as unknown as [{ n: number }];

      const callbacks: Req[] = sids.flatMap((sid) =>
        STATUSES.map((status) => {
          const params = {
            MessageSid: sid,
            SmsSid: sid,
            MessageStatus: status,
            SmsStatus: status,
            AccountSid: `AC${'0'.repeat(32)}`,
            From: fromNumber,
            To: '+14155551234',
            ApiVersion: '2010-04-01',
          };
          return {
            method: 'POST' as const,
            path,
            body: new URLSearchParams(params).toString(),
            headers: {
              'content-type': 'application/x-www-form-urlencoded',
              'x-twilio-signature': getExpectedTwilioSignature(AUTH_TOKEN, signedUrl, params),
            },
          };
        }),
      );
      const duplicates = Array.from(
        { length: Math.round(callbacks.length * 0.1) },
        () => callbacks[Math.floor(Math.random() * callbacks.length)]!,
      );
      const workload = shuffle([...callbacks, ...duplicates]);

      // Warm both routes (first requests compile nothing in production, but open pools).
      await load(
        web.url,
        Array.from({ length: 200 }, () => ({ method: 'GET', path: '/api/v1/health/live' })),
      );
      // Bare handler and callbacks in alternating slices (SLICES of each), not one long phase of
      // each: on shared cores the load moves within a minute, and two phases a minute apart
      // measured different machines (a single run's ratio ranged 45–145%). Each rate is its
      // requests over the sum of its own slices' times.
      const bare: Awaited<ReturnType<typeof load>> = { seconds: 0, latencies: [], statuses: new Map() };
      const hooks: Awaited<ReturnType<typeof load>> = { seconds: 0, latencies: [], statuses: new Map() };
      const add = (into: typeof bare, part: typeof bare) => {
        into.seconds += part.seconds;
        into.latencies.push(...part.latencies);
        for (const [status, n] of part.statuses) into.statuses.set(status, (into.statuses.get(status) ?? 0) + n);
      };
      const size = Math.ceil(workload.length / SLICES);
      for (let i = 0; i < workload.length; i += size) {
        const slice = workload.slice(i, i + size);
        add(
          bare,
          await load(
            web.url,
            slice.map(() => ({ method: 'GET' as const, path: '/api/v1/health/live' })),
          ),
        );
        add(hooks, await load(web.url, slice));
      }

      const wrong = await sql<
        { n: number }[]
      >`select count(*)::int as n from messages where business_id = ${businessId} and status <> 'delivered'`;
      const events = await sql<{ n: number }[]>`select count(*)::int as n from webhook_events where kind = 'sms_status'`;
      const stored = events[0]!.n - eventsBefore;
      const non200 = [...hooks.statuses.entries()].filter(([s]) => s !== 200);
      const bareRate = workload.length / bare.seconds;
      const hookRate = workload.length / hooks.seconds;
      const ratio = (100 * hookRate) / bareRate;
      lostOrWrong += wrong[0]!.n + (callbacks.length - stored);

      console.log('\nresults');
      console.log(`  cores                                   ${os.cpus().length}`);
      console.log(
        `  bare route handler (constant JSON)      ${fmt(bareRate, 0)} req/s, p50 ${fmt(median(bare.latencies))} ms, p99 ${fmt(percentile(bare.latencies, 99))} ms`,
      );
      console.log(
        `  signed status callbacks                 ${fmt(hookRate, 0)} req/s, p50 ${fmt(median(hooks.latencies))} ms, p99 ${fmt(percentile(hooks.latencies, 99))} ms (target p99 ≤ 150 ms)`,
      );
      console.log(`  ratio to the bare handler               ${fmt(ratio, 0)}% (target ≥ 80%)`);
      console.log(
        `  requests                                ${workload.length} (${callbacks.length} distinct + ${duplicates.length} duplicates), non-200: ${non200.length ? JSON.stringify(non200) : 'none'}`,
      );
      console.log(
        `  stored events                           ${stored} (distinct callbacks ${callbacks.length}; lost ${callbacks.length - stored})`,
      );
      console.log(`  messages not at 'delivered'             ${wrong[0]!.n} (must be 0)`);
      const hooksP99 = percentile(hooks.latencies, 99);
      const figures: Figure[] = [
        {
          name: 'signed status callbacks',
          value: hookRate,
          unit: 'req/s',
          digits: 0,
          ceiling: { name: 'bare', value: bareRate },
          target: '≥ 80% of bare, every run',
          ok: ratio >= 80,
        },
        {
          name: 'signed status callbacks p50',
          value: median(hooks.latencies),
          unit: 'ms',
          lowerIsBetter: true,
          ceiling: { name: 'bare p50', value: median(bare.latencies) },
        },
        {
          name: 'signed status callbacks p99',
          value: hooksP99,
          unit: 'ms',
          lowerIsBetter: true,
          ceiling: { name: 'bare p99', value: percentile(bare.latencies, 99) },
          target: '≤ 150 ms',
          ok: hooksP99 <= 150,
        },
        {
          name: 'lost callbacks / messages not delivered',
          value: callbacks.length - stored + wrong[0]!.n,
          unit: '',
          digits: 0,
          target: '0',
          ok: callbacks.length === stored && wrong[0]!.n === 0,
        },
      ];
      return figures;
    },
    'bench:webhooks',
  );

  await web.stop();
  await sql.end();
  await database.stop();
  // Exits 1 only when a callback was lost or a message missed 'delivered'; the ratio is reported (every run's, above).
  process.exit(lostOrWrong === 0 ? 0 : 1);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
