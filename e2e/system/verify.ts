import { randomUUID } from 'node:crypto';
import type { Cluster } from '@/deploy/cluster';
import type { createSql } from '@/db/connect';
import { createBusinessApiKey } from '@/server/services/auth';
import type { FakeTwilio } from '@/server/testing/fake-twilio';
import type { SmtpSink } from '@/server/testing/smtp-sink';
import type { Business, LoadLog } from './load';

/** One check: its failures (empty when it holds); `tally` counts them as lost or duplicated in the summary. */
export type Check = { name: string; failures: string[]; detail?: string; tally?: 'lost' | 'duplicated' };

type Sql = ReturnType<typeof createSql>;

/**
 * What must hold once the run has settled, checked from the database and from the outside: every
 * answered request's effects are there exactly once, every lost answer's effects are all there or
 * none, every message ended sent/delivered or visibly failed, the providers saw each message at
 * most once, counters match a recount, rate limits and idempotency keys held across web processes.
 */
export async function verify(ctx: {
  q: Sql;
  cluster: Cluster;
  log: LoadLog;
  fake: FakeTwilio;
  sink: SmtpSink;
  businesses: Business[];
  platformKey: string;
  rateLimit: number;
}): Promise<Check[]> {
  const { q, log } = ctx;
  const checks: Check[] = [];

  // Sends: by the token every message of a request carries in its text.
  const rows = await q<
    {
      token: string;
      id: number;
      request_id: string | null;
      status: string;
      error_code: string | null;
      error_message: string | null;
      channel: string;
    }[]
  >`
    select split_part(content, '-', 1) as token, id::int as id, request_id, status, error_code, error_message, channel
    from messages where direction = 'outbound' and content like 'sys%' and message_type <> 'NOTE'`;
  type Row = (typeof rows)[number];
  const byToken = new Map<string, Row[]>();
  for (const r of rows) byToken.set(r.token, [...(byToken.get(r.token) ?? []), r]);
  const lostSends: string[] = [];
  const duplicatedSends: string[] = [];
  const halfSends: string[] = [];
  for (const s of log.sends) {
    const found = byToken.get(s.token) ?? [];
    if (s.outcome === 'ok') {
      if (found.length < s.count) lostSends.push(`${s.token}: answered 200 with ${s.count} messages, ${found.length} stored`);
      if (found.length > s.count) duplicatedSends.push(`${s.token}: ${s.count} sent, ${found.length} stored`);
      const ids = new Set(found.map((f) => f.id));
      if (
        found.length === s.count &&
        (s.messageIds!.some((id) => !ids.has(id)) || found.some((f) => f.request_id !== s.requestId))
      ) {
        lostSends.push(`${s.token}: stored messages are not the ones the answer named`);
      }
    } else if (found.length !== 0 && found.length !== s.count) {
      halfSends.push(`${s.token}: answer lost, ${found.length} of ${s.count} stored`);
    } else if (s.outcome === 'refused' && found.length) {
      halfSends.push(`${s.token}: refused with ${s.status}, yet ${found.length} stored`);
    }
  }
  const answered = log.sends.filter((s) => s.outcome === 'ok').length;
  checks.push({
    name: 'every send answered 2xx is stored exactly once, with the ids it answered',
    failures: lostSends,
    detail: `${answered} requests`,
    tally: 'lost',
  });
  checks.push({ name: 'no send stored twice', failures: duplicatedSends, tally: 'duplicated' });
  checks.push({
    name: 'a send whose answer was lost is wholly there or wholly absent',
    failures: halfSends,
    detail: `${log.sends.filter((s) => s.outcome === 'lost').length} lost answers`,
  });
  const refused = log.sends.filter((s) => s.outcome === 'refused');
  checks.push({ name: 'no valid send was refused', failures: refused.map((s) => `${s.token}: ${s.status}`) });
  const keyedLost = log.sends.filter((s) => s.keyed && s.outcome !== 'ok');
  checks.push({
    name: 'every keyed send got its answer in the end (retried with the same key)',
    failures: keyedLost.map((s) => `${s.token}: ${s.outcome} after ${s.attempts} attempts`),
  });

  // Replays: a keyed request sent once more answers what it answered first.
  const replayFailures: string[] = [];
  for (const s of log.sends.filter((x) => x.keyed && x.outcome === 'ok').slice(0, 60)) {
    const b = ctx.businesses.find((x) => x.id === s.businessId)!;
    const c = b.clients[0]!;
    // Another valid body under a known key: must be a 409, never a new send.
    const other =
      s.channel === 'sms'
        ? { client_id: c.id, message: `${s.token}-x another body` }
        : { client_id: c.id, subject: 'x', message: `${s.token}-x another body` };
    const res = await fetch(`${ctx.cluster.url}/api/v1/businesses/${b.id}/${s.channel}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': b.apiKey, 'idempotency-key': `${s.token}-key` },
      body: JSON.stringify({ sender_type: 'staff', messages: [other] }),
    });
    if (res.status !== 409) replayFailures.push(`${s.token}: a different body under its key answered ${res.status}`);
  }
  checks.push({ name: 'a used Idempotency-Key refuses another body (409)', failures: replayFailures });

  // Final states and the providers.
  const notFinal = rows.filter((r) => ['queued', 'sending'].includes(r.status));
  const failedWithoutReason = rows.filter(
    (r) => ['failed', 'undelivered', 'bounced'].includes(r.status) && !r.error_code && !r.error_message,
  );
  checks.push({
    name: 'every queued message ended sent/delivered or visibly failed with a reason',
    failures: [...notFinal, ...failedWithoutReason].map((r) => `message ${r.id}: ${r.status}`),
    detail: statusTally(rows),
  });
  const atTwilio = new Map<string, string[]>();
  for (const m of ctx.fake.messages) atTwilio.set(m.body, [...(atTwilio.get(m.body) ?? []), m.sid]);
  const twice = [...atTwilio].filter(([, sids]) => sids.length > 1);
  // Which message each was, and the SID it kept: the thread to follow in the processes' logs.
  const twiceMessages = new Map(
    (
      await q<{ id: number; content: string; provider_message_id: string | null }[]>`
        select id::int as id, content, provider_message_id from messages
        where direction = 'outbound' and content = any(${twice.map(([body]) => body)}::text[])`
    ).map((m) => [m.content, m]),
  );
  checks.push({
    name: 'the fake Twilio received each SMS at most once',
    failures: twice.map(([body, sids]) => {
      const m = twiceMessages.get(body);
      return `${sids.length}× "${body.slice(0, 40)}" (message ${m?.id ?? '?'}, keeps ${m?.provider_message_id ?? 'none'}; sent as ${sids.join(', ')})`;
    }),
    detail: `${ctx.fake.messages.length} received`,
    tally: 'duplicated',
  });
  const sms = await q<{ id: number; provider_message_id: string | null; status: string }[]>`
    select id::int as id, provider_message_id, status from messages where direction = 'outbound' and content like 'sys%' and channel = 'sms' and status in ('sent', 'delivered', 'undelivered')`;
  const sids = new Set(ctx.fake.messages.map((m) => m.sid));
  checks.push({
    name: 'every SMS marked sent is one the fake Twilio received',
    failures: sms
      .filter((m) => !m.provider_message_id || !sids.has(m.provider_message_id))
      .map((m) => `message ${m.id}: ${m.provider_message_id}`),
    tally: 'lost',
  });
  const atSink = new Map<string, number>();
  for (const m of ctx.sink.messages) {
    const subject = m.parsed.subject ?? '';
    if (subject.startsWith('Booking sys')) atSink.set(subject, (atSink.get(subject) ?? 0) + 1);
  }
  checks.push({
    name: 'the SMTP sink received each email at most once',
    failures: [...atSink].filter(([, n]) => n > 1).map(([s, n]) => `${n}× ${s}`),
    detail: `${atSink.size} received`,
    tally: 'duplicated',
  });

  // Status callbacks: each acknowledged one is stored once and the message is at least that far.
  const cbFailures: string[] = [];
  const acked = [...log.callbacks].filter(([, c]) => c.acked.length);
  for (let i = 0; i < acked.length; i += 500) {
    const part = acked.slice(i, i + 500);
    const found = await q<{ sid: string; ok: boolean; status: string }[]>`
      select v.sid, m.status,
        message_status_rank(m.status, m.message_type) >= (select max(message_status_rank(s, m.message_type)) from unnest(v.statuses) s
                                                            where s not in ('queued')) as ok
      from (select unnest(${part.map(([sid]) => sid)}::text[]) as sid,
                   unnest(${part.map(([, c]) => `{${c.acked.join(',')}}`)}::text[])::text[] as statuses) v
      join messages m on m.provider_message_id = v.sid`;
    const foundSids = new Set(found.map((f) => f.sid));
    for (const [sid] of part) if (!foundSids.has(sid)) cbFailures.push(`${sid}: no message`);
    for (const f of found) if (f.ok === false) cbFailures.push(`${f.sid}: ${f.status}, behind an acknowledged callback`);
  }
  const events = await q<
    { n: number }[]
  >`select count(*)::int as n from webhook_events where kind = 'sms_status' and outcome in ('pending', 'failed')`;
  if (events[0]!.n) cbFailures.push(`${events[0]!.n} status events never processed`);
  checks.push({
    name: 'every acknowledged status callback was applied (the message is at least that far)',
    failures: cbFailures,
    detail: `${acked.length} messages`,
    tally: 'lost',
  });

  // Inbound: each acknowledged SMS and email is one message and one processed event.
  const inbound = await q<{ key: string; n: number }[]>`
    select provider_message_id as key, count(*)::int as n from messages where direction = 'inbound' and channel = 'sms' group by 1
    union all
    select email_message_id, count(*)::int from messages where direction = 'inbound' and channel = 'email' and email_message_id is not null group by 1`;
  const inboundCount = new Map(inbound.map((r) => [r.key, r.n]));
  const inboundLost = [
    ...log.inboundSms.map((x) => ({ key: x.sid, acked: x.acked })),
    ...log.inboundEmail.map((x) => ({ key: x.messageId, acked: x.acked })),
  ];
  checks.push({
    name: 'every inbound SMS and email acknowledged 2xx is stored',
    failures: inboundLost
      .filter((x) => !x.acked || !inboundCount.get(x.key))
      .map((x) => `${x.key}${x.acked ? '' : ' (never acknowledged)'}`),
    detail: `${inboundLost.length} received`,
    tally: 'lost',
  });
  checks.push({
    name: 'no inbound message stored twice (redeliveries deduplicated)',
    failures: inboundLost.filter((x) => (inboundCount.get(x.key) ?? 0) > 1).map((x) => `${x.key}: ${inboundCount.get(x.key)}×`),
    tally: 'duplicated',
  });
  const unprocessed = await q<
    { kind: string; n: number }[]
  >`select kind, count(*)::int as n from webhook_events where outcome in ('pending', 'failed') group by kind`;
  checks.push({
    name: 'every stored webhook event was processed',
    failures: unprocessed.map((u) => `${u.n} ${u.kind} events unprocessed`),
  });

  // Record mode: nothing recorded is ever sent (docs/api.md#record-mode). A recorded text or email
  // carries its token as the first word of its text or subject.
  const recordTokens = new Set(log.records.map((r) => r.token));
  const recordedSent = [
    ...ctx.fake.messages
      .filter((m) => recordTokens.has(m.body.split(' ')[0]!))
      .map((m) => `SMS to ${m.to}: ${m.body.slice(0, 60)}`),
    ...ctx.sink.messages
      .filter((m) => recordTokens.has((m.parsed.subject ?? '').split(' ')[0]!))
      .map((m) => `mail to ${m.envelope.to[0]}: ${m.parsed.subject}`),
  ];
  const storedRecords = await q<
    { n: number }[]
  >`select count(*)::int as n from messages where content like 'rec%' and origin = 'record'`;
  const acceptedRecords = log.records.filter((r) => r.outcome === 'ok').length;
  checks.push({
    name: 'no recorded message was sent (record mode)',
    failures: recordedSent,
    detail: `recorded messages sent: ${recordedSent.length}; ${acceptedRecords} recorded, ${storedRecords[0]?.n ?? 0} stored`,
  });
  const refusedUpdates = log.records.flatMap((r) =>
    r.updates.filter((u) => /^(queued|sending) → /.test(u) && !u.endsWith('→ 422')),
  );
  checks.push({
    name: 'the status endpoints refuse queued and sending (422)',
    failures: refusedUpdates.filter((u) => !u.endsWith('no answer') && !u.endsWith('→ 503')),
    detail: `${log.records.reduce((s, r) => s + r.updates.length, 0)} status updates`,
  });

  // Notes.
  const notes = await q<
    { token: string; n: number }[]
  >`select split_part(content, ' ', 1) as token, count(*)::int as n from messages where message_type = 'NOTE' and content like 'sys%' group by 1`;
  const noteCount = new Map(notes.map((n) => [n.token, n.n]));
  checks.push({
    name: 'every note answered 2xx is stored once',
    failures: log.notes
      .filter((n) => n.outcome === 'ok' && noteCount.get(n.token) !== 1)
      .map((n) => `${n.token}: ${noteCount.get(n.token) ?? 0}×`),
    detail: `${log.notes.length} notes`,
    tally: 'lost',
  });
  checks.push({
    name: 'no note stored twice',
    failures: log.notes.filter((n) => (noteCount.get(n.token) ?? 0) > 1).map((n) => `${n.token}: ${noteCount.get(n.token)}×`),
    tally: 'duplicated',
  });

  // Counters.
  const counters = await q<{ id: number; unread_count: number; flagged_count: number; unread: number; flagged: number }[]>`
    select c.id::int as id, c.unread_count, c.flagged_count,
      count(m.id) filter (where m.direction = 'inbound' and not m.is_read and m.message_type <> 'NOTE')::int as unread,
      count(m.id) filter (where m.flagged)::int as flagged
    from conversations c left join messages m on m.conversation_id = c.id
    group by c.id having c.unread_count <> count(m.id) filter (where m.direction = 'inbound' and not m.is_read and m.message_type <> 'NOTE')
                    or c.flagged_count <> count(m.id) filter (where m.flagged)`;
  checks.push({
    name: 'unread and flagged counts equal a recount from the messages',
    failures: counters.map(
      (c) => `conversation ${c.id}: unread ${c.unread_count} vs ${c.unread}, flagged ${c.flagged_count} vs ${c.flagged}`,
    ),
  });

  checks.push(await rateLimitHolds(ctx));
  checks.push(await idempotencyAcrossWebs(ctx));
  return checks;
}

function statusTally(rows: { status: string }[]) {
  const m = new Map<string, number>();
  for (const r of rows) m.set(r.status, (m.get(r.status) ?? 0) + 1);
  return [...m]
    .sort()
    .map(([s, n]) => `${s} ${n}`)
    .join(', ');
}

/** A fresh key's burst through the balancer: exactly the limit is served within one minute, whichever web serves. */
async function rateLimitHolds(ctx: { cluster: Cluster; businesses: Business[]; rateLimit: number }): Promise<Check> {
  const b = ctx.businesses[0]!;
  // The harness's `db` pool sat idle through the PostgreSQL restart: its first query may meet the
  // goodbye of a connection that is gone (57P01); the next one reconnects.
  let key = '';
  for (let attempt = 1; !key; attempt++) {
    try {
      key = await createBusinessApiKey(b.id);
    } catch (err) {
      if (attempt >= 5) throw err;
    }
  }
  // Inside one fixed minute window: start early in a minute.
  const second = new Date().getSeconds();
  if (second > 25) await new Promise((r) => setTimeout(r, (61 - second) * 1000));
  const total = ctx.rateLimit + 300;
  const statuses = new Map<number, number>();
  let next = 0;
  const t0 = Date.now();
  await Promise.all(
    Array.from({ length: 24 }, async () => {
      while (next < total) {
        next++;
        const res = await fetch(`${ctx.cluster.url}/api/v1/businesses/${b.id}/locations`, {
          headers: { 'x-api-key': key },
        }).catch(() => null);
        await res?.arrayBuffer();
        const status = res?.status ?? 0;
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
      }
    }),
  );
  const ok = statuses.get(200) ?? 0;
  const detail = `${[...statuses].map(([s, n]) => `${s}: ${n}`).join(', ')} in ${((Date.now() - t0) / 1000).toFixed(1)} s, limit ${ctx.rateLimit}/min`;
  return {
    name: 'the rate limit held across both web processes (exact at the limit)',
    failures: ok === ctx.rateLimit ? [] : [`${ok} served, limit ${ctx.rateLimit}`],
    detail,
  };
}

/** One key, the same request sent to each web process directly and at once: one set of messages, one answer. */
async function idempotencyAcrossWebs(ctx: { cluster: Cluster; businesses: Business[]; q: Sql }): Promise<Check> {
  const b = ctx.businesses[1] ?? ctx.businesses[0]!;
  const token = `sysidem${randomUUID().slice(0, 6)}`;
  const body = JSON.stringify({
    sender_type: 'staff',
    messages: b.clients.slice(0, 5).map((c, i) => ({ client_id: c.id, message: `${token}-${i} across webs` })),
  });
  const headers = { 'content-type': 'application/json', 'x-api-key': b.apiKey, 'idempotency-key': `${token}-key` };
  const answers = await Promise.all(
    ctx.cluster.webs.flatMap((w) =>
      [0, 1].map(() =>
        fetch(`http://127.0.0.1:${w.port}/api/v1/businesses/${b.id}/sms`, { method: 'POST', headers, body }).then(async (r) => ({
          status: r.status,
          body: await r.text(),
        })),
      ),
    ),
  );
  const [stored] = await ctx.q<{ n: number }[]>`select count(*)::int as n from messages where content like ${`${token}-%`}`;
  const n = stored?.n ?? 0;
  const failures: string[] = [];
  if (answers.some((a) => a.status !== 200)) failures.push(`answers: ${answers.map((a) => a.status).join(', ')}`);
  // The same JSON (a replay comes from jsonb, whose key order is its own).
  const canonical = (text: string) => JSON.stringify(sortKeys(JSON.parse(text)));
  if (new Set(answers.map((a) => canonical(a.body))).size !== 1)
    failures.push(`the answers differ: ${answers.map((a) => a.body).join(' | ')}`);
  if (n !== 5) failures.push(`${n} messages stored for 5`);
  return { name: 'an Idempotency-Key held across web processes (4 concurrent copies, 2 per web)', failures };
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([k, v]) => [k, sortKeys(v)]),
    );
  return value;
}
