import { randomBytes } from 'node:crypto';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { inArray, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { db } from '@/server/db/client';
import { messages } from '@/db/schema';
import { enqueue } from '@/server/jobs/enqueue';
import { QUEUES } from '@/server/jobs/queues';
import { optIn, optOut } from '@/server/services/messages/suppression';
import { recordConsent } from '@/server/services/compliance/consent';
import {
  clientOptOuts,
  createClient,
  createConversation,
  createMessage,
  createSmsNumber,
  createTenant,
} from '@/server/testing/factories';
import {
  startFakeTwilio,
  type FakeTwilio,
  type FakeTwilioCreateRequest,
  type FakeTwilioReply,
} from '@/server/testing/fake-twilio';
import { twilioErrorMessage } from '@/server/shared/provider-errors';
import { api, jsonOf } from '@/server/testing/http';
import { fakeProvidersEnv, startSmtpSink, type SmtpSink } from '@/server/testing/smtp-sink';
import { startWorkerProcess, type WorkerProcess } from '@/server/testing/worker-process';
import { startWorker } from './index';

/**
 * The send workers end to end (docs/architecture.md#life-of-a-message, docs/api.md#opt-out): messages queued through the real REST
 * endpoints, sent by the real worker through the real `twilio` client (to the local fake Twilio
 * API) and nodemailer (to the local SMTP sink). First with the worker in this process, then as a
 * child process that is SIGKILLed mid-send and replaced.
 *
 * env() reads process.env once, on first use: the fakes start first (their URLs are only known
 * then), process.env is pointed at them, and only then does anything touch the database.
 */
const ENV_KEYS = [
  'SMS_PROVIDER',
  'TWILIO_ACCOUNT_SID',
  'TWILIO_AUTH_TOKEN',
  'TWILIO_API_BASE_URL',
  'EMAIL_PROVIDER',
  'SMTP_URL',
  'WORKER_MAINTENANCE_INTERVAL_SECONDS',
] as const;
const savedEnv = Object.fromEntries(ENV_KEYS.map((k) => [k, process.env[k]]));
process.env.WORKER_MAINTENANCE_INTERVAL_SECONDS = '1';

const STATUS_CALLBACK = 'http://localhost:3000/api/v1/webhooks/twilio/sms/status';
const runId = randomBytes(4).toString('hex');
/** Distinct, possible US numbers: one namespace per scenario. */
const phone = (n: number) => `+1415${String(2_000_000 + n)}`;

let fake: FakeTwilio;
let sink: SmtpSink;
let tenant: Awaited<ReturnType<typeof createTenant>>;
let fromNumber: string;

/** Every create request that reached the fake's behavior (failNext replies do not), in order. */
const creates: { at: number; to: string; body: string }[] = [];
/** Per-To replies (Twilio error codes). */
const replies = new Map<string, FakeTwilioReply>();
/** Called synchronously when a create arrives, before the fake records and answers it. */
let onCreate: ((req: FakeTwilioCreateRequest) => void) | null = null;

beforeAll(async () => {
  fake = await startFakeTwilio();
  sink = await startSmtpSink();
  Object.assign(process.env, fakeProvidersEnv(fake, sink));
  fake.setBehavior((req) => {
    creates.push({ at: Date.now(), to: req.to, body: req.body });
    onCreate?.(req);
    return replies.get(req.to) ?? null;
  });
  // First use of env() and the database.
  tenant = await createTenant();
  fromNumber = (await createSmsNumber(tenant.business.id)).phoneNumber;
});

afterAll(async () => {
  await fake?.close();
  await sink?.close();
  for (const k of ENV_KEYS) {
    if (savedEnv[k] === undefined) delete process.env[k];
    else process.env[k] = savedEnv[k];
  }
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `fn` every 100 ms until it returns something truthy. */
async function until<T>(what: string, fn: () => Promise<T | null | undefined | false>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(100);
  }
}

function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

const rowsOf = (ids: number[]) => db.select().from(messages).where(inArray(messages.id, ids)).orderBy(messages.id);

/** Waits until none of the messages is `queued` or `sending` any more; returns them in id order. */
function settled(ids: number[], timeoutMs = 15_000) {
  return until(
    `${ids.length} message(s) to leave queued/sending`,
    async () => {
      const rows = await rowsOf(ids);
      return rows.length === ids.length && rows.every((r) => r.status !== 'queued' && r.status !== 'sending') && rows;
    },
    timeoutMs,
  );
}

/** The message's pg-boss job(s) in `queue`, live or archived: a job of its own, or a bulk chunk that carries it. */
async function jobsOf(queue: string, messageId: number) {
  const carries = sql`(data->>'messageId' = ${String(messageId)} or data->'messageIds' @> to_jsonb(${messageId}::bigint))`;
  const rows = await db.execute<{ state: string; retry_count: number }>(sql`
    select state::text as state, retry_count from pgboss.job where name = ${queue} and ${carries}
    union all
    select state::text as state, retry_count from pgboss.archive where name = ${queue} and ${carries}`);
  return [...rows];
}

async function post(channel: 'sms' | 'email', items: Record<string, unknown>[]): Promise<number[]> {
  const res = await api.post(`/api/v1/businesses/${tenant.business.id}/${channel}`, {
    headers: { 'x-api-key': tenant.apiKey },
    body: { sender_type: 'staff', messages: items },
  });
  if (res.status !== 200) throw new Error(`POST ${channel}: ${res.status} ${await res.text()}`);
  return (await jsonOf(res)).message_ids as number[];
}

const atFake = (body: string) => fake.messages.filter((m) => m.body === body);
const atSink = (subject: string) => sink.messages.filter((m) => m.parsed.subject === subject);

describe('send worker in process (twilio client → fake Twilio, nodemailer → SMTP sink)', () => {
  let worker: Awaited<ReturnType<typeof startWorker>>;
  beforeAll(async () => {
    worker = await startWorker();
  });
  afterAll(async () => {
    await worker?.stop();
  });

  it('sends a single SMS: sent, the fake sid stored, provider twilio, status callback to PUBLIC_BASE_URL', async () => {
    const body = `Your appointment is confirmed ${runId}`;
    const [id] = await post('sms', [{ to_number: phone(1), message: body }]);
    const [row] = await settled([id!]);
    const sent = atFake(body);
    expect(sent).toHaveLength(1);
    expect(row).toMatchObject({
      status: 'sent',
      provider: 'twilio',
      providerMessageId: sent[0]!.sid,
      errorCode: null,
      segments: 1,
    });
    expect(sent[0]).toMatchObject({ to: phone(1), from: fromNumber, statusCallback: STATUS_CALLBACK });
    // The job is completed just after the message is written.
    await until('the job to complete', async () => (await jobsOf('sms.send', id!))[0]?.state === 'completed');
    expect(await jobsOf('sms.send', id!)).toEqual([{ state: 'completed', retry_count: 0 }]);
  });

  it('sends media_urls as Twilio MediaUrl, in order, and stores them as the attachments (docs/api.md#mms)', async () => {
    const body = `Here is the estimate ${runId}`;
    const media = ['https://cdn.example.com/estimate.png', 'https://cdn.example.com/photo.jpg?v=2'];
    const [id] = await post('sms', [{ to_number: phone(3), message: body, media_urls: media }]);
    const [row] = await settled([id!]);
    expect(row).toMatchObject({ status: 'sent', provider: 'twilio' });
    expect(row!.attachments).toEqual(media.map((url, i) => ({ filename: `media-${i}`, content_type: null, url, size: null })));
    const sent = atFake(body);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.mediaUrls).toEqual(media);
    // A plain SMS carries none.
    const plain = `No pictures ${runId}`;
    await settled(await post('sms', [{ to_number: phone(3), message: plain }]));
    expect(atFake(plain)[0]!.mediaUrls).toEqual([]);
  });

  it('sends an uploaded picture as a MediaUrl of ours, signed at send time, that serves the exact bytes (docs/api.md#mms-uploads)', async () => {
    const picture = Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), randomBytes(2000)]);
    const uploaded = await api.post(`/api/v1/businesses/${tenant.business.id}/media`, {
      headers: { 'x-api-key': tenant.apiKey, 'content-type': 'image/png' },
      body: picture,
    });
    expect(uploaded.status).toBe(200);
    const mediaId = (await jsonOf(uploaded)).media_id as number;
    const body = `Your new color ${runId}`;
    // The first attempt is refused (429, certainly not sent) after the fake saw its MediaUrl: the
    // retry must carry a URL of its own, signed when it went.
    const seenUrls: string[][] = [];
    replies.set(phone(4), { status: 429, code: 20429 });
    onCreate = (req) => {
      if (req.body !== body) return;
      seenUrls.push(req.mediaUrls);
      if (seenUrls.length === 2) replies.delete(phone(4));
    };
    try {
      const [id] = await post('sms', [
        { to_number: phone(4), message: body, media_urls: ['https://cdn.example.com/logo.png'], media_ids: [mediaId] },
      ]);
      const [row] = await settled([id!], 25_000);
      expect(row).toMatchObject({ status: 'sent', provider: 'twilio' });
      const sent = atFake(body);
      expect(sent).toHaveLength(1);
      expect(seenUrls).toHaveLength(2);
      expect(sent[0]!.mediaUrls).toEqual(seenUrls[1]);
      const [caller, ours] = sent[0]!.mediaUrls;
      expect(caller).toBe('https://cdn.example.com/logo.png');
      const url = new URL(ours!);
      expect(`${url.origin}${url.pathname}`).toBe(`http://localhost:3000/api/v1/public-media/${tenant.business.id}/${mediaId}`);
      expect(url.searchParams.get('signature')).toMatch(/^[A-Za-z0-9_-]{43}$/);
      // Signed for each attempt: the retry's link lives longer than the refused one's.
      const expiresOf = (u: string) => Number(new URL(u).searchParams.get('expires'));
      expect(expiresOf(seenUrls[1]![1]!)).toBeGreaterThan(expiresOf(seenUrls[0]![1]!));
      // What Twilio would fetch: our exact bytes, without credentials.
      const served = await api.get(`${url.pathname}${url.search}`);
      expect(served.status).toBe(200);
      expect(served.headers.get('content-type')).toBe('image/png');
      expect(Buffer.compare(Buffer.from(await served.arrayBuffer()), picture)).toBe(0);
      // The link is made at send time and kept nowhere.
      expect(JSON.stringify(row)).not.toContain('signature=');
    } finally {
      onCreate = null;
      replies.delete(phone(4));
    }
  }, 30_000);

  it('sends a bulk request of 200: every row sent with its own sid, exactly one fake message per row', async () => {
    const bodies = Array.from({ length: 200 }, (_, i) => `Bulk ${i} ${runId}`);
    const started = Date.now();
    const ids = await post(
      'sms',
      bodies.map((message, i) => ({ to_number: phone(100 + i), message })),
    );
    expect(ids).toHaveLength(200);
    const rows = await settled(ids, 20_000);
    const elapsed = Date.now() - started;
    const byBody = new Map<string, typeof fake.messages>();
    for (const m of fake.messages) byBody.set(m.body, [...(byBody.get(m.body) ?? []), m]);
    for (const row of rows) {
      const sent = byBody.get(row.content!) ?? [];
      expect(sent, row.content!).toHaveLength(1);
      expect(row).toMatchObject({ status: 'sent', provider: 'twilio', providerMessageId: sent[0]!.sid });
      expect(sent[0]).toMatchObject({ to: row.toAddress, from: fromNumber, statusCallback: STATUS_CALLBACK });
    }
    expect(new Set(rows.map((r) => r.providerMessageId)).size).toBe(200);
    expect(elapsed).toBeLessThan(15_000);
  });

  it('fails permanent errors at once without retrying: 21211 invalid number, 21610 opts the client out', async () => {
    replies.set(phone(500), { status: 400, code: 21211, message: `The 'To' number ${phone(500)} is not a valid phone number.` });
    replies.set(phone(501), { status: 400, code: 21610, message: 'Attempt to send to unsubscribed recipient' });
    const [invalidId, optOutId] = await post('sms', [
      { to_number: phone(500), message: `Invalid ${runId}` },
      { to_number: phone(501), message: `Unsubscribed ${runId}` },
    ]);
    const [invalid, optedOut] = await settled([invalidId!, optOutId!]);
    const failedAt = Date.now();
    expect(invalid).toMatchObject({ status: 'failed', errorCode: '21211', providerMessageId: null });
    // error_code keeps Twilio's code; error_message says it in plain words, the code in front.
    expect(invalid!.errorMessage).toBe(twilioErrorMessage('21211'));
    expect(invalid!.errorMessage).toMatch(/^Twilio error 21211: The client's phone number is not a valid phone number\. Check/);
    expect(optedOut!.errorMessage).toBe(twilioErrorMessage('21610'));
    expect(optedOut).toMatchObject({ status: 'failed', errorCode: '21610', providerMessageId: null });
    expect((await clientOptOuts(optedOut!.clientId)).sms).toBe(true);

    // A new SMS to the opted-out client is recorded failed and never reaches the fake.
    const [laterId] = await post('sms', [{ to_number: phone(501), message: `After STOP ${runId}` }]);
    const [later] = await rowsOf([laterId!]);
    expect(later).toMatchObject({
      status: 'failed',
      errorCode: 'opted_out',
      clientId: optedOut!.clientId,
      providerMessageId: null,
    });
    expect(await jobsOf('sms.send', laterId!)).toEqual([]);

    // Retries would come ≥ 2 s after the failure (retryDelay 2, backoff): give them 3 s.
    await sleep(Math.max(0, 3_000 - (Date.now() - failedAt)));
    expect(creates.filter((c) => c.to === phone(500))).toHaveLength(1);
    expect(creates.filter((c) => c.to === phone(501))).toHaveLength(1);
    expect(creates.filter((c) => c.body === `After STOP ${runId}`)).toHaveLength(0);
    expect(fake.messages.filter((m) => m.to === phone(500) || m.to === phone(501))).toHaveLength(0);
    // One chunk job carried both texts (one request); it completed without a retry.
    await until('the job to complete', async () => (await jobsOf('sms.send.bulk', invalidId!))[0]?.state === 'completed');
    expect(await jobsOf('sms.send.bulk', invalidId!)).toEqual([{ state: 'completed', retry_count: 0 }]);
    expect(await jobsOf('sms.send.bulk', optOutId!)).toEqual([{ state: 'completed', retry_count: 0 }]);
    expect((await rowsOf([invalidId!, optOutId!, laterId!])).map((r) => r.status)).toEqual(['failed', 'failed', 'failed']);
  });

  it('a chunk job with one text refused for now (429) is retried whole, and the texts it already sent are not sent again', async () => {
    const [busy, ok1, ok2] = [phone(610), phone(611), phone(612)];
    replies.set(busy, { status: 429, code: 20429 });
    let busyCalls = 0;
    onCreate = (req) => {
      // The second attempt finds Twilio willing.
      if (req.to === busy && ++busyCalls > 1) replies.delete(busy);
    };
    try {
      const ids = await post('sms', [
        { to_number: busy, message: `Chunk busy ${runId}` },
        { to_number: ok1, message: `Chunk one ${runId}` },
        { to_number: ok2, message: `Chunk two ${runId}` },
      ]);
      const done = await settled(ids, 25_000);
      expect(done.map((r) => r.status)).toEqual(['sent', 'sent', 'sent']);
      for (const to of [ok1, ok2]) expect(creates.filter((c) => c.to === to)).toHaveLength(1);
      expect(creates.filter((c) => c.to === busy)).toHaveLength(2);
      for (const body of [`Chunk busy ${runId}`, `Chunk one ${runId}`, `Chunk two ${runId}`])
        expect(atFake(body)).toHaveLength(1);
      await until('the job to complete', async () => (await jobsOf('sms.send.bulk', ids[0]!))[0]?.state === 'completed');
      for (const id of ids) expect(await jobsOf('sms.send.bulk', id)).toEqual([{ state: 'completed', retry_count: 1 }]);
    } finally {
      onCreate = null;
      replies.delete(busy);
    }
  });

  it('sends an automatic answer (HELP, a fresh opt-out confirmation) to an opted-out client, and nothing else', async () => {
    const client = await createClient(tenant.business.id, { phoneNumber: phone(900), optedOutSms: true });
    const conv = await createConversation(tenant.business.id, client.id);
    const asked = await createMessage(conv, { direction: 'inbound', senderType: 'client', status: 'received' });
    const auto = (body: string, kind: string, extra: Partial<typeof messages.$inferInsert> = {}) =>
      createMessage(conv, {
        content: `${body} ${runId}`,
        status: 'queued',
        provider: 'twilio',
        providerMessageId: null,
        fromAddress: fromNumber,
        toAddress: phone(900),
        senderType: 'system',
        responseId: asked.id,
        attempts: 1,
        providerMetadata: { auto_reply: kind },
        ...extra,
      });
    const rows = [
      await auto('Help answer', 'help'),
      await auto('Fresh confirmation', 'opt_out_confirmation'),
      // Past the rule's 5 minutes.
      await auto('Late confirmation', 'opt_out_confirmation', { createdAt: new Date(Date.now() - 10 * 60_000) }),
      // A retry is a new attempt: refused like any text.
      await auto('Retried help', 'help', { attempts: 2 }),
      // The marker alone (an API caller can set provider_metadata, never response_id) is not enough.
      await auto('Staff text with the marker', 'help', { senderType: 'staff', responseId: null }),
    ];
    await enqueue(
      db,
      QUEUES.smsSend,
      rows.map((r) => ({ data: { messageId: r.id, businessId: tenant.business.id } })),
    );
    const done = await settled(rows.map((r) => r.id));
    expect(done.map((r) => [r.content, r.status, r.errorCode])).toEqual([
      [`Help answer ${runId}`, 'sent', null],
      [`Fresh confirmation ${runId}`, 'sent', null],
      [`Late confirmation ${runId}`, 'failed', 'opted_out'],
      [`Retried help ${runId}`, 'failed', 'opted_out'],
      [`Staff text with the marker ${runId}`, 'failed', 'opted_out'],
    ]);
    expect(
      fake.messages
        .filter((m) => m.to === phone(900))
        .map((m) => m.body)
        .sort(),
    ).toEqual([`Fresh confirmation ${runId}`, `Help answer ${runId}`]);
  });

  it('retries transient errors (429: certainly not sent) with growing backoff and sends exactly once', async () => {
    const body = `Transient ${runId}`;
    // Request arrival times at the fake (failNext answers never reach the behavior): sample the counter.
    const stamps: number[] = [];
    let seen = fake.requests;
    const sampler = setInterval(() => {
      while (seen < fake.requests) {
        seen++;
        stamps.push(Date.now());
      }
    }, 5);
    try {
      fake.failNext(2, { status: 429, code: 20429 });
      const [id] = await post('sms', [{ to_number: phone(600), message: body }]);
      const [row] = await settled([id!], 25_000);
      const sent = atFake(body);
      expect(sent).toHaveLength(1);
      expect(row).toMatchObject({ status: 'sent', provider: 'twilio', providerMessageId: sent[0]!.sid, errorCode: null });
      await until('the job to complete', async () => (await jobsOf('sms.send', id!))[0]?.state === 'completed');
      expect(await jobsOf('sms.send', id!)).toEqual([{ state: 'completed', retry_count: 2 }]);
      expect(stamps).toHaveLength(3);
      const [first, second] = [stamps[1]! - stamps[0]!, stamps[2]! - stamps[1]!];
      // retryDelay 2 s with backoff: the 1st retry waits 2–4 s, the 2nd 4–8 s.
      expect(first).toBeGreaterThanOrEqual(1_900);
      expect(second).toBeGreaterThanOrEqual(first);
    } finally {
      clearInterval(sampler);
    }
  }, 30_000);

  it('sends email over SMTP with cc, bcc (envelope only), a base64 attachment and the tracking headers', async () => {
    const fetched = randomBytes(3000);
    const requests: string[] = [];
    const files = http.createServer((req, res) => {
      requests.push(req.url ?? '');
      if (req.url === '/files/report.bin') {
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': fetched.length });
        res.end(fetched);
      } else {
        res.writeHead(404).end();
      }
    });
    await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = files.address() as AddressInfo;
      const inline = Buffer.from(`Inline attachment ✓ ${runId}`);
      const to = `ana.${runId}@example.test`;
      const cc = `cc.${runId}@example.test`;
      const bcc = `bcc.${runId}@example.test`;
      const subject = `Your receipt ${runId}`;
      const text = 'Thanks for visiting!\nSee you soon.';
      const [id] = await post('email', [
        {
          to_email: to,
          cc_email: [cc],
          bcc_email: [bcc],
          subject,
          message: text,
          attachments: [{ filename: 'note.txt', content_type: 'text/plain', content: inline.toString('base64') }],
        },
      ]);
      const [row] = await settled([id!]);
      const got = atSink(subject);
      expect(got).toHaveLength(1);
      const mail = got[0]!;
      expect(mail.envelope.from).toBe(tenant.business.fromEmail);
      expect([...mail.envelope.to].sort()).toEqual([to, cc, bcc].sort());
      expect(mail.parsed.bcc).toBeUndefined();
      expect(mail.raw).not.toContain(bcc);
      expect(JSON.stringify(mail.parsed.to)).toContain(to);
      expect(JSON.stringify(mail.parsed.cc)).toContain(cc);
      expect(mail.parsed.text?.trim()).toBe(text);
      const attachments = new Map(mail.parsed.attachments.map((a) => [a.filename, a]));
      expect(attachments.get('note.txt')!.content.equals(inline)).toBe(true);
      expect(attachments.get('note.txt')!.contentType).toBe('text/plain');
      expect(mail.parsed.headers.get('x-message-id-internal')).toBe(String(id));
      const smtpApi = /^X-SMTPAPI: (.+)$/im.exec(mail.raw);
      expect(smtpApi).not.toBeNull();
      expect(JSON.parse(smtpApi![1]!.trim())).toEqual({
        unique_args: { message_id: String(id), business_id: String(tenant.business.id) },
      });
      expect(mail.parsed.messageId).toMatch(/^<.+@.+>$/);
      expect(row).toMatchObject({
        status: 'sent',
        provider: 'smtp',
        providerMessageId: mail.parsed.messageId,
        emailMessageId: mail.parsed.messageId,
        errorCode: null,
      });

      // The attack: an attachment URL inside our network (the metadata service, a database, this
      // file server on 127.0.0.1). The worker refuses it without connecting: the message fails with
      // the reason, nothing is mailed, and the server saw no request.
      const probe = `Probe ${runId}`;
      const [probeId] = await post('email', [
        {
          to_email: to,
          subject: probe,
          message: 'x',
          attachments: [{ filename: 'report.bin', url: `http://127.0.0.1:${port}/files/report.bin` }],
        },
      ]);
      const [refused] = await settled([probeId!]);
      expect(refused).toMatchObject({ status: 'failed', errorCode: 'attachment_url_refused' });
      expect(atSink(probe)).toHaveLength(0);
      expect(requests).toEqual([]);
    } finally {
      files.closeAllConnections();
      await new Promise((r) => files.close(r));
    }
  });

  it('fails an email the SMTP server rejects with 550 (no retry)', async () => {
    const subject = `Bounce ${runId}`;
    const [id] = await post('email', [{ to_email: `nobody.${runId}@bounce.test`, subject, message: 'Hello?' }]);
    const [row] = await settled([id!]);
    expect(row).toMatchObject({ status: 'failed', provider: 'smtp', errorCode: '550', providerMessageId: null });
    expect(row!.errorMessage).toMatch(/^Email error 550 5\.1\.1: The email address does not exist.* Server reply: .*550 5\.1\.1/);
    expect(atSink(subject)).toHaveLength(0);
    // The message is written before the batch loop records its job's outcome.
    await until('the job to complete', async () => (await jobsOf('email.send', id!))[0]?.state === 'completed');
    expect(await jobsOf('email.send', id!)).toEqual([{ state: 'completed', retry_count: 0 }]);
  });
});

/**
 * A TCP relay to 127.0.0.1:targetPort. `down` sees each chunk the server sends (before it is
 * relayed; return false to swallow it), `up` each chunk the client sends; both get the pair's
 * sockets and a per-connection state object.
 */
type Pair = { client: net.Socket; upstream: net.Socket; state: Record<string, unknown> };
async function startTcpRelay(
  targetPort: number,
  hooks: { up?: (d: Buffer, p: Pair) => boolean; down?: (d: Buffer, p: Pair) => boolean },
) {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(targetPort, '127.0.0.1');
    const pair: Pair = { client, upstream, state: {} };
    sockets.add(client);
    sockets.add(upstream);
    client.on('data', (d: Buffer) => {
      if ((hooks.up?.(d, pair) ?? true) && !upstream.destroyed) upstream.write(d);
    });
    upstream.on('data', (d: Buffer) => {
      if ((hooks.down?.(d, pair) ?? true) && !client.destroyed) client.write(d);
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    for (const sock of [client, upstream]) {
      sock.on('error', end);
      sock.on('close', end);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const sock of sockets) sock.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * A relay in front of the SMTP sink that, when armed, withholds the sink's answer to the end of
 * DATA ("250 … Queued as sink-N"): the server has the message, the client never learns it.
 */
async function startSmtpRelay(targetPort: number) {
  let armed: (() => void) | null = null;
  const relay = await startTcpRelay(targetPort, {
    down(d, { state }) {
      if (state.withholding) return false;
      if (armed && d.toString().includes('Queued as sink-')) {
        state.withholding = true;
        const accepted = armed;
        armed = null;
        accepted();
        return false;
      }
      return true;
    },
  });
  return {
    url: `smtp://127.0.0.1:${relay.port}`,
    /** Resolves when the sink has accepted the next message; its answer is never relayed. */
    withholdNextAcceptance: () => new Promise<void>((resolve) => (armed = resolve)),
    close: relay.close,
  };
}

describe('opt-outs by address at send time (docs/api.md#opt-out)', () => {
  it('a number opted out on one client row fails a message queued earlier to another row with it; opted back in, it is sent', async () => {
    // Two client rows share a phone (a family, a duplicate import); no worker runs while the message waits.
    const shared = phone(800);
    const parent = await createClient(tenant.business.id, { phoneNumber: shared });
    const child = await createClient(tenant.business.id, { phoneNumber: shared });
    const body = `Queued before the STOP ${runId}`;
    const [queuedId] = await post('sms', [{ client_id: child.id, message: body }]);
    expect((await rowsOf([queuedId!]))[0]).toMatchObject({ status: 'queued' });
    // The parent's row opts out (as its STOP would) after the child's message was queued.
    await optOut({ businessId: tenant.business.id, channel: 'sms', address: shared, source: 'keyword' }, db);
    expect(await clientOptOuts(child.id)).toEqual({ sms: true, email: false });

    // Also an email to an address opted out through another row spelled differently.
    const address = `Shared.${runId}@Example.test`;
    await createClient(tenant.business.id, { email: address });
    const emailClient = await createClient(tenant.business.id, { email: address.toLowerCase() });
    const subject = `Queued before the unsubscribe ${runId}`;
    const [emailId] = await post('email', [{ client_id: emailClient.id, subject, message: 'Hello' }]);
    await optOut({ businessId: tenant.business.id, channel: 'email', address, source: 'provider_error' }, db);

    // The latest record decides at send time: out and back in is sent; out, in and out again is not.
    const target = (n: number) => ({ businessId: tenant.business.id, channel: 'sms' as const, address: phone(n) });
    const backIn = `Out and back in ${runId}`;
    const outAgain = `Out, in and out again ${runId}`;
    const [backInId] = await post('sms', [{ to_number: phone(810), message: backIn }]);
    const [outAgainId] = await post('sms', [{ to_number: phone(811), message: outAgain }]);
    for (const n of [810, 811]) {
      await optOut({ ...target(n), source: 'keyword' }, db);
      await optIn({ ...target(n), source: 'keyword' }, db);
    }
    await optOut({ ...target(811), source: 'staff' }, db);

    const worker = await startWorker();
    try {
      const [inAgain, outOnceMore] = await settled([backInId!, outAgainId!]);
      expect(inAgain).toMatchObject({ status: 'sent', provider: 'twilio' });
      expect(outOnceMore).toMatchObject({ status: 'failed', errorCode: 'opted_out', providerMessageId: null });
      expect(atFake(backIn)).toHaveLength(1);
      expect(atFake(outAgain)).toHaveLength(0);

      const [sms, email] = await settled([queuedId!, emailId!]);
      expect(sms).toMatchObject({ status: 'failed', errorCode: 'opted_out', providerMessageId: null });
      expect(email).toMatchObject({ status: 'failed', errorCode: 'opted_out', providerMessageId: null });
      expect(creates.filter((c) => c.to === shared)).toHaveLength(0);
      expect(atSink(subject)).toHaveLength(0);

      // START (opt back in): the next message to either row is sent.
      await optIn({ businessId: tenant.business.id, channel: 'sms', address: shared, source: 'keyword' }, db);
      const again = `After START ${runId}`;
      const [againId] = await post('sms', [{ client_id: parent.id, message: again }]);
      const [sent] = await settled([againId!]);
      expect(sent).toMatchObject({ status: 'sent', provider: 'twilio' });
      expect(atFake(again)).toHaveLength(1);
      expect(atFake(body)).toHaveLength(0);
    } finally {
      await worker.stop();
    }
  }, 30_000);
});

describe('marketing consent and cc/bcc suppression at send time (docs/api.md#consent)', () => {
  const postCampaign = async (channel: 'sms' | 'email', items: Record<string, unknown>[], extra: Record<string, unknown>) => {
    const res = await api.post(`/api/v1/businesses/${tenant.business.id}/${channel}`, {
      headers: { 'x-api-key': tenant.apiKey },
      body: { sender_type: 'staff', messages: items, ...extra },
    });
    expect(res.status).toBe(200);
    return (await jsonOf(res)).message_ids as number[];
  };
  const consent = (clientId: number, channel: 'sms' | 'email', status: 'given' | 'withdrawn', recordedAt: Date) =>
    recordConsent(
      tenant.business.id,
      clientId,
      { channel, purpose: 'marketing', status, source: 'api', recorded_at: recordedAt },
      null,
    );

  it('a campaign queued with consent that is withdrawn before the worker runs never reaches Twilio or SMTP; one with consent is sent', async () => {
    const withdrawn = await createClient(tenant.business.id, {
      phoneNumber: phone(950),
      email: `withdrawn.${runId}@example.test`,
    });
    const consenting = await createClient(tenant.business.id, { phoneNumber: phone(951) });
    const hourAgo = new Date(Date.now() - 3_600_000);
    for (const c of [withdrawn, consenting]) await consent(c.id, 'sms', 'given', hourAgo);
    await consent(withdrawn.id, 'email', 'given', hourAgo);

    const smsBody = `Spring offer ${runId}`;
    const [lateSms, sentSms] = await postCampaign(
      'sms',
      [
        { client_id: withdrawn.id, message: smsBody },
        { client_id: consenting.id, message: smsBody },
      ],
      { category: 'campaign' },
    );
    const subject = `Leave us a review ${runId}`;
    const [lateEmail] = await postCampaign('email', [{ client_id: withdrawn.id, subject, message: 'How did we do?' }], {
      category: 'transactional',
      notification_type: 'review_request',
    });
    expect((await rowsOf([lateSms!, sentSms!, lateEmail!])).map((m) => m.status)).toEqual(['queued', 'queued', 'queued']);
    // The client withdraws marketing consent on both channels while the messages wait.
    await consent(withdrawn.id, 'sms', 'withdrawn', new Date());
    await consent(withdrawn.id, 'email', 'withdrawn', new Date());

    const worker = await startWorker();
    try {
      const [smsLate, smsSent, emailLate] = await settled([lateSms!, sentSms!, lateEmail!]);
      expect(smsLate).toMatchObject({ status: 'failed', errorCode: 'no_marketing_consent', providerMessageId: null });
      expect(smsLate!.errorMessage).toMatch(/marketing consent for texts/);
      expect(emailLate).toMatchObject({ status: 'failed', errorCode: 'no_marketing_consent', emailMessageId: null });
      expect(smsSent).toMatchObject({ status: 'sent', provider: 'twilio' });
      expect(creates.filter((c) => c.to === phone(950))).toHaveLength(0);
      expect(creates.filter((c) => c.to === phone(951))).toHaveLength(1);
      expect(atSink(subject)).toHaveLength(0);
    } finally {
      await worker.stop();
    }
  }, 30_000);

  it('an email is not copied to cc or bcc addresses opted out of email; the others get it', async () => {
    const to = `to.${runId}@example.test`;
    const keptCc = `kept-cc.${runId}@example.test`;
    const droppedCc = `Dropped-CC.${runId}@example.test`;
    const droppedBcc = `dropped-bcc.${runId}@example.test`;
    for (const address of [droppedCc, droppedBcc]) {
      await optOut({ businessId: tenant.business.id, channel: 'email', address, source: 'provider_error' }, db);
    }
    const subject = `Copies ${runId}`;
    const [id] = await post('email', [
      { to_email: to, subject, message: 'Hello', cc_email: [keptCc, droppedCc.toLowerCase()], bcc_email: [droppedBcc] },
    ]);
    const worker = await startWorker();
    try {
      const [sent] = await settled([id!]);
      expect(sent).toMatchObject({ status: 'sent' });
      const mail = await until('the email at the sink', async () => atSink(subject)[0]);
      expect([...mail.envelope.to].sort()).toEqual([keptCc, to].sort());
      expect(mail.raw.toLowerCase()).not.toContain(droppedCc.toLowerCase());
    } finally {
      await worker.stop();
    }
  }, 30_000);
});

describe('send worker as a process, killed mid-send', () => {
  const workers: WorkerProcess[] = [];
  afterAll(async () => {
    await Promise.all(workers.map((w) => w.stop(5_000)));
  });

  it('reconciles an SMS Twilio accepted (not resent), fails an email of unknown outcome safe, and honours a later opt-out', async () => {
    const relay = await startSmtpRelay(sink.port);
    const env = { SMTP_URL: relay.url, WORKER_MAINTENANCE_INTERVAL_SECONDS: '1', LOG_LEVEL: 'info' };
    try {
      const first = await startWorkerProcess(env);
      workers.push(first);

      // 1. An email the SMTP server accepts, whose answer never reaches the worker.
      const subject = `Crash email ${runId}`;
      const emailAccepted = relay.withholdNextAcceptance();
      const [emailId] = await post('email', [
        { to_email: `crash.${runId}@example.test`, subject, message: 'Sent once, at most.' },
      ]);
      await within(emailAccepted, 15_000, 'the sink to accept the email');

      // 2. An SMS the fake accepts, the worker killed (SIGKILL, whole process group) before it hears so.
      const smsBody = `Crash sms ${runId}`;
      const smsTo = phone(700);
      onCreate = (req) => {
        if (req.body === smsBody) first.kill('SIGKILL');
      };
      const [smsId] = await post('sms', [{ to_number: smsTo, message: smsBody }]);
      const exit = await within(first.exited, 15_000, 'the worker to die');
      onCreate = null;
      expect(exit.signal).toBe('SIGKILL');

      const byId = new Map((await rowsOf([smsId!, emailId!])).map((r) => [r.id, r]));
      const [smsRow, emailRow] = [byId.get(smsId!), byId.get(emailId!)];
      expect(smsRow).toMatchObject({ status: 'sending', providerMessageId: null });
      expect(atFake(smsBody)).toHaveLength(1);
      expect(emailRow).toMatchObject({ status: 'sending', providerMessageId: null });
      expect(emailRow!.emailMessageId).toMatch(/^<.+>$/);
      expect(atSink(subject)).toHaveLength(1);

      // 3. Meanwhile: an SMS queued while no worker runs, whose client opts out before it is sent.
      const optClient = await createClient(tenant.business.id, { phoneNumber: phone(701) });
      const optBody = `Opted out before sending ${runId}`;
      const [optId] = await post('sms', [{ client_id: optClient.id, message: optBody }]);
      await optOut({ businessId: tenant.business.id, channel: 'sms', address: phone(701), source: 'staff' }, db);

      // 4. The dead worker's jobs expire at once; a fresh worker picks them up.
      const expired = await db.execute(sql`
        update pgboss.job set expire_in = interval '1 second'
        where state = 'active' and data->>'messageId' = any(${sql.param([String(smsId), String(emailId)])}::text[])
        returning id`);
      expect(expired).toHaveLength(2);
      const listsBefore = fake.requests;
      const second = await startWorkerProcess(env);
      workers.push(second);

      const after = new Map((await settled([smsId!, emailId!, optId!], 30_000)).map((r) => [r.id, r]));
      const [sms, email, opt] = [after.get(smsId!), after.get(emailId!), after.get(optId!)];
      const atFakeNow = fake.messages.filter((m) => m.to === smsTo);
      expect(atFakeNow).toHaveLength(1);
      expect(sms).toMatchObject({ status: 'sent', provider: 'twilio', providerMessageId: atFakeNow[0]!.sid });
      expect(creates.filter((c) => c.body === smsBody)).toHaveLength(1);
      expect(fake.requests).toBeGreaterThan(listsBefore); // findSent asked the fake
      expect(second.output()).toContain('reconciled: already sent by an earlier attempt');
      expect(await jobsOf('sms.send', smsId!)).toEqual([{ state: 'completed', retry_count: 1 }]);

      expect(email).toMatchObject({ status: 'failed', errorCode: 'unknown_outcome', providerMessageId: null });
      expect(atSink(subject).length).toBeLessThanOrEqual(1);

      expect(opt).toMatchObject({ status: 'failed', errorCode: 'opted_out', providerMessageId: null });
      expect(creates.filter((c) => c.body === optBody)).toHaveLength(0);

      // The fresh worker drains and exits cleanly on SIGTERM.
      expect(await second.stop()).toMatchObject({ code: 0, signal: null });
    } finally {
      onCreate = null;
      await relay.close();
    }
    // Two worker processes start here, each loading its event log thread's modules before it takes jobs.
  }, 75_000);

  // postgres.js loads array types on each new connection and drops that query's promise
  // (porsager/postgres #1192, #1205, #1223): a connection reset at that moment is an unhandled
  // rejection, which the worker entry logs and survives (workers/index.ts).
  it('survives a database connection reset while postgres.js loads array types on a fresh connection', async () => {
    const url = new URL(process.env.DATABASE_URL!);
    let resets = 0;
    const relay = await startTcpRelay(Number(url.port), {
      up(d, { client }) {
        if (resets === 0 && d.toString('latin1').includes("typcategory = 'A'")) {
          resets++;
          client.resetAndDestroy();
          return false;
        }
        return true;
      },
    });
    url.port = String(relay.port);
    try {
      const worker = await startWorkerProcess({
        DATABASE_URL: url.toString(),
        WORKER_MAINTENANCE_INTERVAL_SECONDS: '1',
        LOG_LEVEL: 'info',
      });
      workers.push(worker);
      const body = `Fresh connection ${runId}`;
      const [id] = await post('sms', [{ to_number: phone(800), message: body }]);
      await until('the relay to reset the types query', async () => resets === 1, 10_000);
      await until(
        'the worker to send the SMS or exit',
        async () => !worker.alive() || (await rowsOf([id!]))[0]!.status === 'sent',
        10_000,
      ).catch(() => {});
      const [row] = await rowsOf([id!]);
      expect(worker.alive(), `the worker exited:\n${worker.output().split('\n').slice(-12).join('\n')}`).toBe(true);
      expect(row).toMatchObject({ status: 'sent' });
      expect(atFake(body)).toHaveLength(1);
    } finally {
      await relay.close();
    }
  }, 30_000);
});
