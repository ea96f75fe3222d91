import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSql } from '@/db/connect';
import { MESSAGE_STATUSES } from '@/db/schema/enums';
import { twilioWebhookRequest } from '@/server/providers/webhook-requests';
import { mustRefuse } from './documented-types';
import { mutate, mutationArb, type Mutation, type Parts } from './hostile';
import { SchemaArbitraries, type Pools, type Schema } from './schema-arbitrary';
import { NOTIFICATION_SENDER, startFuzzStack, type FuzzStack } from './stack';

/**
 * The OpenAPI fuzzer (Schemathesis's checks, in TypeScript): reads /api/v1/openapi.json from the
 * production build, generates requests for every operation from the operation's own schemas —
 * valid ones, and ones that break exactly one rule (hostile.ts) — with the platform key and a
 * business key, and checks every answer: no 5xx, a status the document lists, the declared
 * content type, a body valid against the documented schema, under 3 s; a mutated value of a type
 * the document does not give its field (or an integer outside its range, a path or query integer
 * not in plain digits) is never accepted (documented-types.ts). A rejected write must leave
 * the database as it was; after the run, everything that reached the fake Twilio or the SMTP sink
 * must be a message the service accepted. FUZZ_RUNS sets the number of requests (default 10,000),
 * FUZZ_SEED replays a run; a failure prints its seed and path.
 */
const RUNS = Number(process.env.FUZZ_RUNS ?? 10_000);
const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined;
/** A guard against pathological handling, not a performance target (the benchmarks measure those): room for a loaded machine. */
const MAX_MS = 3_000;

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
type Operation = {
  method: Method;
  path: string;
  id: string;
  secured: boolean;
  params: { name: string; in: 'path' | 'query' | 'header'; required?: boolean; schema: Schema }[];
  body?: { type: string; schema: Schema };
  responses: Record<string, { content?: Record<string, { schema?: Schema }> }>;
};

type FuzzRequest = { op: Operation; parts: Parts; key: 'platform' | 'business' | null; mutation: Mutation | null };

let stack: FuzzStack;
let sql: ReturnType<typeof createSql>;
let doc: { paths: Record<string, Record<string, Record<string, unknown>>>; components: { schemas: Record<string, Schema> } };
let businessKey: string;
const stats = { requests: 0, byStatus: new Map<number, number>(), mutated: 0, slowest: 0, accepted: 0 };

beforeAll(async () => {
  stack = await startFuzzStack();
  sql = createSql(stack.databaseUrl, { max: 1 });
  doc = await (await fetch(`${stack.baseUrl}/api/v1/openapi.json`)).json();
}, 600_000);

afterAll(async () => {
  await sql?.end({ timeout: 5 });
  await stack?.stop();
});

const platform = () => ({ 'x-api-key': stack.platformKey });

async function api(method: string, path: string, body?: unknown, headers: Record<string, string> = platform()) {
  const res = await fetch(`${stack.baseUrl}/api/v1${path}`, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

/** A business with staff, clients, locations, conversations and messages: the rows valid requests reach. */
async function seed(): Promise<Pools> {
  const onboarded = await api('POST', '/business/onboard', {
    external_id: 'fuzz-business',
    name: 'Fuzz Studio',
    timezone: 'America/New_York',
    sms_numbers: ['+14155550100'],
    from_email: 'studio@fuzz.example.com',
    locations: [{ external_id: 'loc-1', name: 'Main' }],
    staff: [1, 2, 3].map((i) => ({ external_id: `staff-${i}`, name: `Staff ${i}`, email: `staff${i}@fuzz.example.com` })),
    clients: [1, 2, 3, 4, 5].map((i) => ({
      external_id: `client-${i}`,
      name: `Client ${i}`,
      email: `client${i}@example.com`,
      phone_number: `+1415555020${i}`,
    })),
  });
  expect(onboarded.status).toBe(200);
  businessKey = onboarded.body.api_key;
  const b = onboarded.body.business_id as number;
  const clientIds = (onboarded.body.clients as { client_id: number }[]).map((c) => c.client_id);
  const conversationIds: number[] = [];
  for (const clientId of clientIds)
    conversationIds.push((await api('POST', `/businesses/${b}/conversations`, { client_id: clientId })).body.conversation_id);
  const sms = await api('POST', `/businesses/${b}/sms`, {
    sender_type: 'system',
    messages: clientIds.map((id) => ({ client_id: id, message: 'Your appointment is confirmed' })),
  });
  const email = await api('POST', `/businesses/${b}/email`, {
    sender_type: 'system',
    messages: [{ client_id: clientIds[0], subject: 'Hello', message: 'See you soon' }],
  });
  const replies = await Promise.all(
    [
      { title: 'Confirmed', body: 'Hi {{client.first_name}}, see you at {{location.name}}.' },
      { title: 'Follow-up', body: 'Thanks for visiting {{business.name}}!', channel: 'email', subject: 'Thank you' },
    ].map((r) => api('POST', `/businesses/${b}/saved-replies`, r)),
  );
  expect([sms.status, email.status, ...replies.map((r) => r.status)]).toEqual([200, 200, 200, 200]);
  // An endpoint at the local sink: the events of the run are delivered there, and its operations
  // (deliveries, test events, redeliveries, rotation) have a real endpoint to work on.
  const endpoint = await api('POST', `/businesses/${b}/webhook-endpoints`, { url: stack.webhookSink.url });
  expect(endpoint.status).toBe(201);
  return {
    business_id: [b],
    client_id: clientIds,
    conversation_id: conversationIds,
    staff_id: (onboarded.body.staff as { staff_id: number }[]).map((s) => s.staff_id),
    location_id: (onboarded.body.locations as { location_id: number }[]).map((l) => l.location_id),
    message_id: [...sms.body.message_ids, ...email.body.message_ids],
    message_ids: [...sms.body.message_ids],
    // A note's @mentions (docs/api.md#mentions): the business's active staff.
    mentions: (onboarded.body.staff as { staff_id: number }[]).map((s) => s.staff_id),
    // The collision guard's mark (docs/api.md#collision-guard): a message the business has, or 0.
    last_seen_message_id: [0, ...sms.body.message_ids, ...email.body.message_ids],
    saved_reply_id: replies.map((r) => r.body.saved_reply_id as number),
    request_id: [sms.body.request_id, email.body.request_id],
    to_number: ['+14155550201', '+14155550202', '(415) 555-0203'],
    from_number: ['+14155550100'],
    phone_number: ['+14155550204'],
    to_email: ['client1@example.com', 'newclient@example.com'],
    from_email: ['studio@fuzz.example.com'],
    external_id: ['client-1', 'staff-2', 'loc-1'],
    search: ['Client', 'example.com'],
    search_term: ['appointment', 'soon', 'nothing-matches'],
    timezone: ['America/New_York', 'Europe/Paris'],
    sender_type: ['system', 'staff'],
    // Every URL a valid request registers is the sink's: the worker must never call anywhere else
    // (checked after the run); a generated string that is not that URL is refused as one.
    url: [stack.webhookSink.url],
    endpoint_id: [endpoint.body.id],
    delivery_id: [],
  };
}

function operations(): Operation[] {
  const ops: Operation[] = [];
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, raw] of Object.entries(methods)) {
      const op = raw as Record<string, unknown>;
      const content = ((op.requestBody as Record<string, unknown> | undefined)?.content ?? {}) as Record<
        string,
        { schema: Schema }
      >;
      const [type, media] = Object.entries(content)[0] ?? [];
      // Provider webhooks (form, multipart, or under /webhooks) have their own property suite in
      // server/services/webhooks: they are signed by providers, outside the API's auth model.
      if (path.includes('/webhooks') || (type !== undefined && type !== 'application/json')) continue;
      ops.push({
        method: method as Method,
        path,
        id: op.operationId as string,
        secured: ((op.security as unknown[] | undefined) ?? []).length > 0,
        params: (op.parameters ?? []) as Operation['params'],
        body: type ? { type, schema: media!.schema } : undefined,
        responses: op.responses as Operation['responses'],
      });
    }
  }
  return ops;
}

function requestArb(ops: Operation[], arbs: SchemaArbitraries): fc.Arbitrary<FuzzRequest> {
  return fc.oneof(
    ...ops.map((op) => {
      const params: Record<string, fc.Arbitrary<unknown>> = {};
      const query: Record<string, fc.Arbitrary<unknown>> = {};
      for (const p of op.params) {
        if (p.in === 'path') params[p.name] = arbs.of(p.schema, p.name);
        if (p.in === 'query') query[p.name] = arbs.of(p.schema, p.name);
      }
      const optionalQuery = op.params.filter((p) => p.in === 'query' && !p.required).map((p) => p.name);
      return fc.record({
        op: fc.constant(op),
        parts: fc.record({
          params: fc.record(params),
          query: fc.record(query, { requiredKeys: Object.keys(query).filter((k) => !optionalQuery.includes(k)) }),
          body: op.body ? arbs.of(op.body.schema) : fc.constant(undefined),
        }) as fc.Arbitrary<Parts>,
        key: op.secured ? fc.constantFrom<'platform' | 'business'>('platform', 'business') : fc.constant(null),
        mutation: fc.option(mutationArb, { freq: 2 }),
      });
    }),
  );
}

function urlOf(req: FuzzRequest): string {
  // A path parameter is always present (a missing one is another URL, which the router redirects):
  // an absent or empty value travels as a space.
  const segment = (v: unknown) =>
    encodeURIComponent(v === undefined || v === '' ? ' ' : typeof v === 'string' ? v.toWellFormed() : JSON.stringify(v));
  const path = req.op.path.replace(/\{(\w+)\}/g, (_, name: string) => segment(req.parts.params[name]));
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(req.parts.query)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) search.append(name, typeof v === 'string' ? v : JSON.stringify(v));
  }
  const qs = search.toString();
  return `${stack.baseUrl}/api/v1${path}${qs ? `?${qs}` : ''}`;
}

const ajv = new Ajv2020({ strict: false, allErrors: false, validateSchema: false });
addFormats(ajv);
const validators = new Map<string, ReturnType<typeof ajv.compile>>();

/** Validates a body against the document's schema for (operation, status), compiled once. */
function validatorFor(op: Operation, status: string, media: string) {
  const key = `${op.method} ${op.path} ${status} ${media}`;
  let validate = validators.get(key);
  if (!validate) {
    if (!ajv.getSchema('doc')) ajv.addSchema(doc as object, 'doc');
    const pointer = ['paths', op.path, op.method, 'responses', status, 'content', media, 'schema']
      .map((s) => s.replaceAll('~', '~0').replaceAll('/', '~1'))
      .join('/');
    validate = ajv.compile({ $ref: `doc#/${pointer}` });
    validators.set(key, validate);
  }
  return validate;
}

const countsSql = () => sql<{ rows: string }[]>`
  select concat_ws(',', (select count(*) from messages), (select count(*) from clients), (select count(*) from conversations),
    (select count(*) from businesses), (select count(*) from staff), (select count(*) from locations), (select count(*) from sessions),
    (select count(*) from saved_replies), (select coalesce(max(updated_at)::text, '') from saved_replies)) as rows`;

async function send(req: FuzzRequest): Promise<void> {
  const parts = structuredClone(req.parts);
  const what = req.mutation ? mutate(parts, req.mutation) : 'valid';
  if (req.mutation) stats.mutated++;
  const headers: Record<string, string> = {};
  if (req.key === 'platform') headers['x-api-key'] = stack.platformKey;
  if (req.key === 'business') headers['x-api-key'] = businessKey;
  let body: string | undefined;
  if (req.op.method !== 'get' && (parts.body !== undefined || parts.rawBody !== undefined)) {
    body = parts.rawBody ?? JSON.stringify(parts.body);
    headers['content-type'] = parts.contentType ?? 'application/json';
  }
  const url = urlOf({ ...req, parts });
  const before = req.op.method !== 'get' ? (await countsSql())[0]!.rows : null;
  const started = performance.now();
  const res = await fetch(url, { method: req.op.method.toUpperCase(), headers, body, redirect: 'manual' });
  const text = await res.text();
  const ms = performance.now() - started;
  stats.requests++;
  stats.byStatus.set(res.status, (stats.byStatus.get(res.status) ?? 0) + 1);
  stats.slowest = Math.max(stats.slowest, ms);
  const sent = body === undefined ? '' : ` ${body.length > 2000 ? `${body.slice(0, 2000)}… (${body.length} chars)` : body}`;
  const where = `${req.op.method.toUpperCase()} ${url.slice(stack.baseUrl.length, stack.baseUrl.length + 160)}${sent} [${what}] → ${res.status} ${text.slice(0, 300)}`;

  expect(res.status, `5xx: ${where}`).toBeLessThan(500);
  expect(ms, `over ${MAX_MS} ms (${Math.round(ms)}): ${where}`).toBeLessThan(MAX_MS);
  const documented = req.op.responses[String(res.status)];
  expect(documented, `status not documented: ${where}`).toBeDefined();
  const mediaTypes = Object.keys(documented!.content ?? {});
  if (mediaTypes.length > 0) {
    const media = (res.headers.get('content-type') ?? '').split(';')[0]!.trim();
    expect(mediaTypes, `content type ${media} not documented: ${where}`).toContain(media);
    if (media === 'application/json') {
      const validate = validatorFor(req.op, String(res.status), media);
      const ok = validate(JSON.parse(text));
      expect(ok, `body breaks the documented schema (${ajv.errorsText(validate.errors)}): ${where}`).toBe(true);
    }
  }
  if (parts.mutated && res.status < 300) {
    // docs/api.md#conventions: a value of a type the document does not give its field is never accepted.
    const why = mustRefuse(parts.mutated.at, parts.mutated.value, req.op, doc.components.schemas);
    expect(why, `accepted a value the document refuses (${why}): ${where}`).toBeNull();
  }
  if (before !== null) {
    const after = (await countsSql())[0]!.rows;
    if (res.status >= 400) expect(after, `a rejected request left rows behind: ${where}`).toBe(before);
    else stats.accepted++;
  }
  if (res.status === 200 && text.startsWith('{')) harvest(JSON.parse(text));
}

let pools: Pools;
const HARVESTED = ['message_id', 'conversation_id', 'client_id', 'request_id', 'saved_reply_id'] as const;

/** Ids in an answer join the pools, so later requests use what earlier ones created. */
function harvest(answer: Record<string, unknown>) {
  const add = (name: string, value: unknown) => {
    const pool = pools[name];
    if (!pool || pool.length >= 200 || (typeof value !== 'number' && typeof value !== 'string') || pool.includes(value)) return;
    pool.push(value);
  };
  for (const name of HARVESTED) add(name, answer[name]);
  for (const id of Array.isArray(answer.message_ids) ? answer.message_ids : []) add('message_id', id);
  // A webhook delivery (a test event's, a redelivery's): its id is a delivery_id.
  if (typeof answer.event_type === 'string') add('delivery_id', answer.id);
  const data = answer.data as Record<string, unknown> | undefined;
  if (data) for (const name of HARVESTED) add(name, data[name]);
}

describe('OpenAPI fuzzer', () => {
  it(`${RUNS} generated requests: no 5xx, documented statuses, types and bodies, no side effect when rejected`, async () => {
    const started = Date.now();
    pools = await seed();
    const ops = operations();
    expect(ops.length).toBeGreaterThan(25);
    const arbs = new SchemaArbitraries(doc.components.schemas, pools);
    await fc.assert(fc.asyncProperty(requestArb(ops, arbs), send), { numRuns: RUNS, seed: SEED, endOnFailure: true, verbose: 1 });

    // Whatever left the service was accepted by it: every SMS the fake Twilio received and every
    // mail the sink received belongs to a stored message or a staff notification (and rejected
    // requests stored none).
    await waitForWorker();
    const sent = await sql<{ to_address: string | null; content: string | null; subject: string | null }[]>`
      select to_address, content, subject from messages where direction = 'outbound'`;
    // A re-queued message is sent again under a new provider id, so correlate by what was sent.
    const sms = new Set(sent.map((m) => `${m.to_address}|${m.content}`));
    const mail = new Set(sent.map((m) => `${m.to_address}|${m.subject}`));
    for (const m of stack.twilio.messages)
      expect(sms, `an SMS reached Twilio that no accepted request stored: ${m.to}`).toContain(`${m.to}|${m.body}`);
    const mails = [...stack.sink.messages];
    const staffMail = await staffMailSent();
    for (const m of mails) {
      if (staffMail.recorded.has(`sent as ${m.parsed.messageId}`)) continue;
      // A notification's record of its sent mail is replaced when a later event folds into it and
      // plans the next email (docs/api.md#notifications): such a mail is known by its sender, the
      // notification address, and its recipient, a staff member.
      const from = m.parsed.from?.value[0]?.address;
      if (from === NOTIFICATION_SENDER && staffMail.staffAddresses.has(String(m.envelope.to[0]).toLowerCase())) continue;
      expect(mail, `a mail reached SMTP that no accepted request stored: ${m.parsed.subject}`).toContain(
        `${m.envelope.to[0]}|${m.parsed.subject}`,
      );
    }

    // Webhook deliveries went only to the sink: no endpoint with another URL was ever attempted.
    const called = await sql<{ url: string }[]>`
      select distinct e.url from webhook_endpoints e join webhook_deliveries d on d.endpoint_id = e.id where d.attempts > 0`;
    for (const { url } of called) expect(url, 'the worker called a webhook URL the fuzzer generated').toBe(stack.webhookSink.url);

    const statuses = [...stats.byStatus.entries()]
      .sort(([a], [b]) => a - b)
      .map(([s, n]) => `${s}×${n}`)
      .join(' ');
    console.log(
      `fuzz: ${stats.requests} requests over ${ops.length} operations in ${Math.round((Date.now() - started) / 1000)} s ` +
        `(${stats.mutated} mutated, ${stats.accepted} writes accepted); statuses ${statuses}; slowest ${Math.round(stats.slowest)} ms; ` +
        `${stack.twilio.messages.length} SMS at the fake Twilio, ${stack.sink.messages.length} mails at the sink, ` +
        `${stack.webhookSink.received()} webhooks at theirs`,
    );
    expect(stats.requests).toBe(RUNS);
  }, 900_000);
});

/** Until nothing is queued or sending, at most 15 s (a message to a bad number may back off longer). */
/**
 * Staff's own mail (a notification, a digest of waiting conversations) is not a message: each
 * records `sent as <Message-ID>` once sent. Those in flight (claimed, not yet recorded) are waited
 * for, so every mail the sink already holds is recorded when this answers.
 */
async function staffMailSent(): Promise<{ recorded: Set<string>; staffAddresses: Set<string> }> {
  for (const deadline = Date.now() + 60_000; Date.now() < deadline;) {
    const [row] = await sql<{ n: number }[]>`
      select (select count(*) from notifications where email_state = 'sent' and email_detail = 'sending')
           + (select count(*) from notification_digests where email_detail = 'sending') as n`;
    if (Number(row!.n) === 0) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  const rows = await sql<{ detail: string }[]>`
    select email_detail as detail from notifications where email_state = 'sent'
    union all select email_detail from notification_digests where email_detail is not null`;
  const staff = await sql<{ email: string }[]>`select lower(btrim(email)) as email from staff where email is not null`;
  return { recorded: new Set(rows.map((r) => r.detail)), staffAddresses: new Set(staff.map((r) => r.email)) };
}

async function waitForWorker() {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const [row] = await sql<
      { n: number }[]
    >`select count(*)::int as n from messages where status in ('queued', 'sending') and direction = 'outbound'`;
    if (row!.n === 0) return;
    await new Promise((r) => setTimeout(r, 500));
  }
}

/**
 * The tenant-wall attacks, replayed from outside against the production build: each once worked,
 * each must now be refused and leave no trace (nothing stored, nothing at the fake Twilio, the
 * SMTP sink or the private HTTP server).
 */
/** A business with one number, one sender address, an owner and one client. */
const onboardSmallBusiness = (name: string, number: string, clientNumber: string) =>
  api('POST', '/business/onboard', {
    external_id: name,
    name: `${name} studio`,
    timezone: 'America/Chicago',
    sms_numbers: [number],
    from_email: `hello@${name}.example.com`,
    staff: [{ external_id: 'owner', name: `${name} owner` }],
    clients: [{ external_id: 'c1', name: `${name} client`, phone_number: clientNumber, email: `client@${name}.example.com` }],
  });

describe('attacks replayed against the production build', () => {
  it('are refused and leave no trace', async () => {
    const other = await onboardSmallBusiness('other', '+14155550900', '+14155550901');
    expect(other.status).toBe(200);
    const mine = await onboardSmallBusiness('attacker', '+14155550800', '+14155550801');
    expect(mine.status).toBe(200);
    const key = { 'x-api-key': mine.body.api_key as string };
    const b = mine.body.business_id as number;
    const clientId = (mine.body.clients as { client_id: number }[])[0]!.client_id;
    const rows = async () => (await countsSql())[0]!.rows;
    const before = await rows();

    // Sending as another business.
    const spoofSms = await api(
      'POST',
      `/businesses/${b}/sms`,
      { sender_type: 'system', from_number: '+14155550900', messages: [{ client_id: clientId, message: 'hi' }] },
      key,
    );
    expect(spoofSms.status).toBe(422);
    const spoofEmail = await api(
      'POST',
      `/businesses/${b}/email`,
      {
        sender_type: 'system',
        from_email: 'hello@other.example.com',
        messages: [{ client_id: clientId, subject: 's', message: 'm' }],
      },
      key,
    );
    expect(spoofEmail.status).toBe(422);
    expect(await rows()).toBe(before);

    // Claiming another business's provider id in record mode.
    const otherSent = await api('POST', `/businesses/${other.body.business_id}/sms/record`, {
      sender_type: 'system',
      provider: 'twilio',
      messages: [{ to_number: '+14155550901', message: 'x', provider_message_id: 'SMvictim0000000000000000000000000' }],
    });
    expect(otherSent.status).toBe(200);
    const beforeClaim = await rows();
    const claim = await api(
      'POST',
      `/businesses/${b}/sms/record`,
      {
        sender_type: 'system',
        provider: 'twilio',
        messages: [{ client_id: clientId, message: 'x', provider_message_id: 'SMvictim0000000000000000000000000' }],
      },
      key,
    );
    expect(claim.status).toBe(422);
    expect(await rows()).toBe(beforeClaim);

    // An attachment URL inside the network: accepted as a message, refused by the worker without a
    // single request reaching the private server, and nothing mailed.
    const seen: string[] = [];
    const { createServer } = await import('node:http');
    const internal = createServer((req, res) => (seen.push(req.url ?? ''), res.end('secret')));
    await new Promise<void>((r) => internal.listen(0, '127.0.0.1', r));
    const port = (internal.address() as { port: number }).port;
    try {
      const ssrf = await api(
        'POST',
        `/businesses/${b}/email`,
        {
          sender_type: 'system',
          messages: [
            {
              client_id: clientId,
              subject: 'SSRF probe',
              message: 'm',
              attachments: [{ filename: 'meta.txt', url: `http://127.0.0.1:${port}/latest/meta-data/` }],
            },
          ],
        },
        key,
      );
      expect(ssrf.status).toBe(200);
      const id = (ssrf.body.message_ids as number[])[0]!;
      let status = '';
      for (let i = 0; i < 100 && !['failed', 'sent'].includes(status); i++) {
        await new Promise((r) => setTimeout(r, 200));
        status = (
          await sql<{ status: string; error_code: string | null }[]>`select status, error_code from messages where id = ${id}`
        )[0]!.status;
      }
      const [row] = await sql<
        { status: string; error_code: string | null }[]
      >`select status, error_code from messages where id = ${id}`;
      expect(row).toEqual({ status: 'failed', error_code: 'attachment_url_refused' });
      expect(seen).toEqual([]);
      expect(stack.sink.messages.filter((m) => m.parsed.subject === 'SSRF probe')).toEqual([]);
    } finally {
      internal.close();
    }

    // A login link works once; /sandbox does not exist in production; pages cannot be framed.
    const token = await api('POST', '/auth/token', {
      business_id: b,
      staff_id: (mine.body.staff as { staff_id: number }[])[0]!.staff_id,
    });
    const link = token.body.login_url.replace(/^https?:\/\/[^/]+/, stack.baseUrl);
    expect((await fetch(link, { redirect: 'manual' })).status).toBe(303);
    const replay = await fetch(link, { redirect: 'manual' });
    expect(replay.status).toBe(401);
    expect(replay.headers.get('set-cookie')).toBeNull();
    expect(replay.headers.get('x-frame-options')).toBe('DENY');
    expect((await fetch(`${stack.baseUrl}/sandbox`, { redirect: 'manual' })).status).toBe(404);

    // Issue 32: record mode asked to send (an item `queued`, then a status `queued`), and a campaign
    // sent to a number on another client's consent. Refused, nothing stored, nothing sent.
    const beforeRecord = await rows();
    const recordQueued = await api(
      'POST',
      `/businesses/${b}/sms/record`,
      { sender_type: 'system', messages: [{ to_number: '+14155550877', message: 'mirror', status: 'queued' }] },
      key,
    );
    expect(recordQueued.status).toBe(422);
    await sql`insert into consents (business_id, client_id, channel, purpose, status, source)
              values (${b}, ${clientId}, 'sms', 'marketing', 'given', 'api')`;
    const onAnothersConsent = await api(
      'POST',
      `/businesses/${b}/sms`,
      {
        sender_type: 'system',
        category: 'campaign',
        messages: [{ client_id: clientId, to_number: '+14155550878', message: 'Sale' }],
      },
      key,
    );
    expect(onAnothersConsent.status).toBe(422);
    expect(await rows()).toBe(beforeRecord);
    const initiated = await api(
      'POST',
      `/businesses/${b}/sms/record`,
      { sender_type: 'system', messages: [{ to_number: '+14155550879', message: 'mirror initiated', status: 'initiated' }] },
      key,
    );
    expect(initiated.status).toBe(200);
    const reported = await api(
      'POST',
      `/businesses/${b}/sms/status`,
      { message_id: initiated.body.message_ids[0], status: 'queued' },
      key,
    );
    expect(reported.status).toBe(422);

    // Nothing was ever sent from the other business's number to the attacker's client.
    expect(stack.twilio.messages.filter((m) => m.from === '+14155550900' && m.to === '+14155550801')).toEqual([]);
  }, 120_000);
});

/**
 * Record mode never sends (docs/api.md#record-mode), as stateful sequences against the production
 * build and its worker, whose recovery sweep runs every second here (stack.ts): record messages in
 * any status (the refused ones included), move them through the status endpoints and Twilio's
 * signed status callbacks in any order, and let sweeps pass. Every recorded text and email carries
 * a token of its own; none may ever reach the fake Twilio or the SMTP sink.
 */
const SEQUENCES = Number(process.env.FUZZ_SEQUENCES ?? 25);
const TWILIO_CALLBACK_STATUSES = [
  'accepted',
  'scheduled',
  'queued',
  'sending',
  'sent',
  'delivered',
  'undelivered',
  'failed',
  'read',
  'canceled',
];

type RecordStep =
  | { kind: 'record'; channel: 'sms' | 'email'; status: string | undefined; inbound: boolean }
  | { kind: 'status'; target: number; status: string; byProviderId: boolean }
  | { kind: 'callback'; target: number; status: string }
  | { kind: 'sweep' };

const recordStepArb: fc.Arbitrary<RecordStep> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('record' as const),
      channel: fc.constantFrom<'sms' | 'email'>('sms', 'email'),
      status: fc.option(fc.constantFrom(...MESSAGE_STATUSES), { nil: undefined }),
      inbound: fc.constantFrom(false, false, false, false, true),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('status' as const),
      target: fc.nat(),
      status: fc.constantFrom(...MESSAGE_STATUSES),
      byProviderId: fc.boolean(),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('callback' as const),
      target: fc.nat(),
      status: fc.constantFrom(...TWILIO_CALLBACK_STATUSES),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'sweep' as const }) },
);

describe('record mode never sends (stateful sequences against the production build)', () => {
  it(`${SEQUENCES} sequences of record → status updates → sweeps: nothing recorded reaches Twilio or SMTP`, async () => {
    const onboarded = await onboardSmallBusiness('recorder', '+14155550700', '+14155550701');
    expect(onboarded.status).toBe(200);
    const b = onboarded.body.business_id as number;
    const key = { 'x-api-key': onboarded.body.api_key as string };
    const tokens: string[] = [];
    let seq = 0;
    // The control: a message of the send path whose job is gone (an initiated record made into one
    // in the database: queued, origin send, a minute old, no job). The sweep must send it, so the
    // run shows the sweep ran; nothing recorded may follow it.
    const control = await api(
      'POST',
      `/businesses/${b}/sms/record`,
      { sender_type: 'system', messages: [{ to_number: '+14155550702', message: 'sweep control', status: 'initiated' }] },
      key,
    );
    expect(control.status).toBe(200);
    await sql`update messages set origin = 'send', status = 'queued', attempts = 1, status_updated_at = now() - interval '1 minute'
              where id = ${control.body.message_ids[0] as number}`;
    const accepted = { recorded: 0, statuses: 0, callbacks: 0, sweeps: 0 };

    await fc.assert(
      fc.asyncProperty(fc.array(recordStepArb, { minLength: 1, maxLength: 8 }), async (steps) => {
        seq++;
        const recorded: { id: number; channel: 'sms' | 'email'; sid: string; to: string }[] = [];
        for (const step of steps) {
          if (step.kind === 'record') {
            const token = `rec-${seq}-${recorded.length}-${Math.random().toString(36).slice(2, 8)}`;
            const sid = `SM${Buffer.from(token).toString('hex').padEnd(32, '0').slice(0, 32)}`;
            const to =
              step.channel === 'sms'
                ? `+1415556${String(1000 + (tokens.length % 9000)).padStart(4, '0')}`
                : `${token}@client.example`;
            const item =
              step.channel === 'sms'
                ? { to_number: to, message: token, provider_message_id: sid }
                : { to_email: to, subject: token, message: token, provider_message_id: sid };
            const res = await api(
              'POST',
              `/businesses/${b}/${step.channel}/record`,
              {
                sender_type: 'system',
                provider: step.channel === 'sms' ? 'twilio' : 'smtp',
                messages: [
                  { ...item, ...(step.status ? { status: step.status } : {}), ...(step.inbound ? { direction: 'inbound' } : {}) },
                ],
              },
              key,
            );
            expect([200, 422], JSON.stringify(res.body)).toContain(res.status);
            if (res.status === 200) {
              tokens.push(token);
              recorded.push({ id: res.body.message_ids[0], channel: step.channel, sid, to });
              accepted.recorded++;
            }
          } else if (step.kind === 'status' && recorded.length) {
            const m = recorded[step.target % recorded.length]!;
            const target = step.byProviderId ? { provider_message_id: m.sid } : { message_id: m.id };
            const res = await api('POST', `/businesses/${b}/${m.channel}/status`, { ...target, status: step.status }, key);
            expect([200, 409, 422], JSON.stringify(res.body)).toContain(res.status);
            if (res.status === 200) accepted.statuses++;
          } else if (step.kind === 'callback' && recorded.length) {
            const m = recorded[step.target % recorded.length]!;
            const url = `${stack.baseUrl}/api/v1/webhooks/twilio/sms/status`;
            const form = {
              MessageSid: m.sid,
              MessageStatus: step.status,
              AccountSid: stack.twilio.accountSid,
              From: '+14155550700',
              To: m.to,
            };
            const { headers, body } = twilioWebhookRequest(url, form, stack.twilio.authToken);
            const res = await fetch(url, { method: 'POST', headers, body });
            expect(res.status).toBeLessThan(500);
            if (res.status === 200) accepted.callbacks++;
          } else if (step.kind === 'sweep') {
            // The sweep runs every second and takes what has been in flight for a second.
            await new Promise((r) => setTimeout(r, 2_500));
            accepted.sweeps++;
          }
        }
      }),
      { numRuns: SEQUENCES, seed: SEED, endOnFailure: true, verbose: 1 },
    );
    // Past the sweep's threshold and a few of its passes; and until the worker's queues are idle.
    await new Promise((r) => setTimeout(r, 3_500));
    await waitForWorker();

    const reached = [
      ...stack.twilio.messages.filter((m) => tokens.some((t) => m.body.includes(t))).map((m) => `SMS ${m.to}: ${m.body}`),
      ...stack.sink.messages
        .filter((m) => tokens.some((t) => (m.parsed.subject ?? '').includes(t)))
        .map((m) => `mail ${m.envelope.to[0]}: ${m.parsed.subject}`),
    ];
    console.log(
      `record sequences: ${SEQUENCES} (${accepted.recorded} recorded, ${accepted.statuses} statuses and ${accepted.callbacks} callbacks accepted, ${accepted.sweeps} sweep waits); recorded messages sent: ${reached.length}`,
    );
    expect(reached, 'recorded messages sent').toEqual([]);
    expect(
      stack.twilio.messages.filter((m) => m.body === 'sweep control'),
      'the sweep sent its control',
    ).toHaveLength(1);
    expect(accepted.recorded).toBeGreaterThan(0);
  }, 600_000);
});
