import { randomUUID } from 'node:crypto';
import type { FakeTwilio } from '@/server/testing/fake-twilio';
import { multipartBody, twilioSid, twilioWebhookRequest, TWILIO_WEBHOOK_PATHS } from '@/server/providers/webhook-requests';

/**
 * The system test's traffic, every kind at once, through the balancer, each request logged with
 * what became of it, so the checks afterwards know what must be in the database:
 * - sends (SMS and email, single and bulk), half of them with an Idempotency-Key; some of the keyed
 *   ones have their connection cut mid-request and are sent again with the same key until answered,
 *   as a careful client would; the unkeyed ones are sent once (a lost answer is not retried);
 * - Twilio status callbacks for what the fake Twilio accepted, with duplicates and out of order;
 * - inbound SMS and email, redelivered until acknowledged, as providers do;
 * - notes, read marks and flags; inbox reads over REST and tRPC;
 * - record mode (docs/api.md#record-mode): mirrors of what another system sent, `initiated` and
 *   moved along by the status endpoints (`queued`/`sending` refused) and by Twilio's own callbacks
 *   (which may say `queued`): none of them may ever reach the fake Twilio or the SMTP sink.
 */
export type Business = {
  id: number;
  apiKey: string;
  smsNumber: string;
  fromEmail: string;
  clients: { id: number; phone: string; email: string; conversationId: number }[];
  cookies: string[];
};

type SendRecord = {
  channel: 'sms' | 'email';
  businessId: number;
  token: string;
  count: number;
  keyed: boolean;
  cut: boolean;
  /** `ok`: answered 2xx; `lost`: no answer (only unkeyed requests stay lost); `refused`: a 4xx. */
  outcome: 'ok' | 'lost' | 'refused';
  status?: number;
  requestId?: string;
  messageIds?: number[];
  attempts: number;
};

type NoteRecord = {
  businessId: number;
  conversationId: number;
  token: string;
  keyed: boolean;
  outcome: 'ok' | 'lost';
  messageId?: number;
};

/** A recorded message: its token (the first word of its text or subject) and what the status endpoints answered. */
type RecordedRecord = {
  businessId: number;
  channel: 'sms' | 'email';
  token: string;
  outcome: 'ok' | 'lost' | 'refused';
  /** `status → HTTP status` of each status update sent for it. */
  updates: string[];
};

export type LoadLog = {
  sends: SendRecord[];
  records: RecordedRecord[];
  notes: NoteRecord[];
  inboundSms: { businessId: number; sid: string; acked: boolean; deliveries: number }[];
  inboundEmail: { businessId: number; messageId: string; acked: boolean; deliveries: number }[];
  /** Per MessageSid, the statuses whose callback was acknowledged 2xx. */
  callbacks: Map<string, { statuses: string[]; errorCode?: string; acked: string[] }>;
  reads: Map<string, number>;
  marks: Map<string, number>;
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const pick = <T>(xs: T[]) => xs[Math.floor(Math.random() * xs.length)]!;
const count = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1);

type Answer = { status: number; body: unknown };

/** Every 500 the service answered (a 503 while PostgreSQL is down is expected; a 500 never is). */
export const serverErrors: string[] = [];
/** Every "the database cannot be reached" 503, with when its request was sent (none once PostgreSQL is back: run.ts). */
export const databaseUnavailable: { sentAt: number; what: string }[] = [];

async function call(url: string, init: RequestInit & { timeoutMs?: number; cutAfterMs?: number }): Promise<Answer> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), init.cutAfterMs ?? init.timeoutMs ?? 30_000);
  const sentAt = Date.now();
  try {
    const res = await fetch(url, { ...init, signal: controller.signal });
    const text = await res.text();
    let body: unknown = text;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      // not JSON
    }
    if (res.status === 500) serverErrors.push(`${init.method ?? 'GET'} ${new URL(url).pathname}: ${text.slice(0, 300)}`);
    // The service's own answer (REST's detail, tRPC's message), not the balancer's: a process
    // killed mid-request, or both webs briefly marked down, is another matter.
    if (res.status === 503 && (text.includes('database cannot be reached') || text.includes('Database unavailable')))
      databaseUnavailable.push({ sentAt, what: `${init.method ?? 'GET'} ${new URL(url).pathname}` });
    return { status: res.status, body };
  } finally {
    clearTimeout(timer);
  }
}

export function startLoad(options: {
  baseUrl: string;
  businesses: Business[];
  fake: FakeTwilio;
  twilioToken: string;
  inboundSecret: string;
  concurrency?: { sends: number };
}) {
  const { baseUrl, businesses, fake } = options;
  let stopping = false;
  let seq = 0;
  const log: LoadLog = {
    sends: [],
    records: [],
    notes: [],
    inboundSms: [],
    inboundEmail: [],
    callbacks: new Map(),
    reads: new Map(),
    marks: new Map(),
  };
  const runId = randomUUID().slice(0, 6);

  async function sendOne() {
    const b = pick(businesses);
    const channel: 'sms' | 'email' = Math.random() < 0.8 ? 'sms' : 'email';
    const bulk = Math.random() < 0.4;
    const n = bulk ? (channel === 'sms' ? 10 + Math.floor(Math.random() * 40) : 2 + Math.floor(Math.random() * 6)) : 1;
    const token = `sys${runId}s${++seq}`;
    const keyed = Math.random() < 0.5;
    const cut = keyed && Math.random() < 0.2;
    const messages = Array.from({ length: n }, (_, i) => {
      const c = b.clients[(seq * 7 + i) % b.clients.length]!;
      return channel === 'sms'
        ? { client_id: c.id, message: `${token}-${i} Your appointment is confirmed.` }
        : { client_id: c.id, subject: `Booking ${token}-${i}`, message: `${token}-${i} See you Thursday.` };
    });
    const record: SendRecord = { channel, businessId: b.id, token, count: n, keyed, cut, outcome: 'lost', attempts: 0 };
    log.sends.push(record);
    const headers: Record<string, string> = { 'content-type': 'application/json', 'x-api-key': b.apiKey };
    if (keyed) headers['idempotency-key'] = `${token}-key`;
    const body = JSON.stringify({ sender_type: 'staff', messages });
    for (;;) {
      record.attempts++;
      let answer: Answer | null = null;
      try {
        answer = await call(`${baseUrl}/api/v1/businesses/${b.id}/${channel}`, {
          method: 'POST',
          headers,
          body,
          // The first attempt of a "cut" request: the client gives up after a few ms, its answer lost.
          cutAfterMs: cut && record.attempts === 1 ? 5 + Math.random() * 120 : undefined,
        });
      } catch {
        answer = null;
      }
      if (answer && answer.status === 200) {
        const r = answer.body as { request_id: string; message_ids: number[] };
        Object.assign(record, { outcome: 'ok', status: 200, requestId: r.request_id, messageIds: r.message_ids });
        return;
      }
      if (answer && answer.status >= 400 && answer.status < 500 && answer.status !== 409 && answer.status !== 429) {
        Object.assign(record, { outcome: 'refused', status: answer.status });
        return;
      }
      if (!keyed) {
        record.status = answer?.status;
        return; // unkeyed: never sent twice by the client
      }
      if (record.attempts > 120) return;
      await sleep(250 + Math.random() * 250);
    }
  }

  /** POSTs until a 2xx, as a provider redelivers; false if it never got one. */
  async function deliver(url: string, init: () => RequestInit, onAttempt: () => void, maxAttempts = 120): Promise<boolean> {
    for (let i = 0; i < maxAttempts; i++) {
      onAttempt();
      try {
        const answer = await call(url, init());
        if (answer.status >= 200 && answer.status < 300) return true;
      } catch {
        // a cut connection: deliver again
      }
      await sleep(250 + Math.random() * 250);
    }
    return false;
  }

  async function inboundSms() {
    const b = pick(businesses);
    const c = pick(b.clients);
    const sid = twilioSid('SM');
    const entry = { businessId: b.id, sid, acked: false, deliveries: 0 };
    log.inboundSms.push(entry);
    const params = {
      MessageSid: sid,
      SmsSid: sid,
      AccountSid: fake.accountSid,
      From: c.phone,
      To: b.smsNumber,
      Body: `inbound ${sid} can I move to 3pm?`,
      NumMedia: '0',
      ApiVersion: '2010-04-01',
    };
    const path = TWILIO_WEBHOOK_PATHS.smsIncoming;
    const init = () => {
      const { headers, body } = twilioWebhookRequest(`${baseUrl}${path}`, params, options.twilioToken);
      return { method: 'POST', headers, body };
    };
    entry.acked = await deliver(`${baseUrl}${path}`, init, () => entry.deliveries++);
    // Providers redeliver now and then even after a 2xx: one more copy must change nothing.
    if (entry.acked && Math.random() < 0.15) await deliver(`${baseUrl}${path}`, init, () => entry.deliveries++, 3);
  }

  async function inboundEmail() {
    const b = pick(businesses);
    const c = pick(b.clients);
    const messageId = `<${randomUUID()}@mail.system.test>`;
    const entry = { businessId: b.id, messageId, acked: false, deliveries: 0 };
    log.inboundEmail.push(entry);
    const headerLines = [
      `From: ${c.email}`,
      `To: ${b.fromEmail}`,
      'Subject: Re: your booking',
      `Message-ID: ${messageId}`,
      'MIME-Version: 1.0',
    ];
    const fields = {
      headers: headerLines.join('\n') + '\n',
      to: b.fromEmail,
      from: c.email,
      subject: 'Re: your booking',
      text: `inbound ${messageId} Thursday works.\n`,
      charsets: JSON.stringify({ to: 'UTF-8', from: 'UTF-8', subject: 'UTF-8', text: 'UTF-8' }),
    };
    const { contentType, bytes } = await multipartBody(fields);
    const url = `${baseUrl}/api/v1/email/webhooks/sendgrid/inbound?secret=${encodeURIComponent(options.inboundSecret)}`;
    entry.acked = await deliver(
      url,
      () => ({ method: 'POST', headers: { 'content-type': contentType }, body: new Uint8Array(bytes) }),
      () => entry.deliveries++,
    );
  }

  async function note() {
    const b = pick(businesses);
    const c = pick(b.clients);
    const token = `sys${runId}n${++seq}`;
    const keyed = Math.random() < 0.5;
    const record: NoteRecord = { businessId: b.id, conversationId: c.conversationId, token, keyed, outcome: 'lost' };
    log.notes.push(record);
    const headers: Record<string, string> = { 'content-type': 'application/json', 'x-api-key': b.apiKey };
    if (keyed) headers['idempotency-key'] = `${token}-key`;
    for (let attempt = 0; attempt < (keyed ? 120 : 1); attempt++) {
      try {
        const answer = await call(`${baseUrl}/api/v1/businesses/${b.id}/conversations/${c.conversationId}/notes`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ content: `${token} called to confirm` }),
        });
        if (answer.status === 200) {
          record.outcome = 'ok';
          record.messageId = (answer.body as { data: { message_id: number } }).data.message_id;
          return;
        }
      } catch {
        // lost
      }
      await sleep(300);
    }
  }

  async function recordOne() {
    const b = pick(businesses);
    const c = pick(b.clients);
    const channel: 'sms' | 'email' = Math.random() < 0.75 ? 'sms' : 'email';
    const token = `rec${runId}r${++seq}`;
    const sid = twilioSid('SM');
    const entry: RecordedRecord = { businessId: b.id, channel, token, outcome: 'lost', updates: [] };
    log.records.push(entry);
    const headers = { 'content-type': 'application/json', 'x-api-key': b.apiKey };
    const item =
      channel === 'sms'
        ? { client_id: c.id, message: `${token} mirrored from the booking system`, status: 'initiated', provider_message_id: sid }
        : {
            client_id: c.id,
            subject: `${token} mirrored`,
            message: `${token} mirrored from the booking system`,
            status: 'initiated',
          };
    const recorded = await call(`${baseUrl}/api/v1/businesses/${b.id}/${channel}/record`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ sender_type: 'staff', ...(channel === 'sms' ? { provider: 'twilio' } : {}), messages: [item] }),
    }).catch(() => null);
    if (!recorded || recorded.status !== 200) {
      entry.outcome = recorded && recorded.status >= 400 && recorded.status < 500 ? 'refused' : 'lost';
      return;
    }
    entry.outcome = 'ok';
    const id = (recorded.body as { message_ids: number[] }).message_ids[0]!;
    // The other system reports what happened, sometimes naming a status that would mean "send it".
    for (const status of [pick(['queued', 'sending', 'sent']), pick(['sent', 'delivered', 'queued'])]) {
      const answer = await call(`${baseUrl}/api/v1/businesses/${b.id}/${channel}/status`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ message_id: id, status }),
      }).catch(() => null);
      entry.updates.push(`${status} → ${answer?.status ?? 'no answer'}`);
    }
    // Twilio's own callback for the recorded SID, as if the other system's send were queued there.
    if (channel === 'sms') {
      const path = TWILIO_WEBHOOK_PATHS.smsStatus;
      const params = {
        MessageSid: sid,
        MessageStatus: pick(['queued', 'sending']),
        AccountSid: fake.accountSid,
        From: b.smsNumber,
        To: c.phone,
      };
      await deliver(
        `${baseUrl}${path}`,
        () => {
          const { headers: h, body } = twilioWebhookRequest(`${baseUrl}${path}`, params, options.twilioToken);
          return { method: 'POST', headers: h, body };
        },
        () => {},
        20,
      );
    }
  }

  /** Status callbacks for the messages the fake Twilio accepted: some in order, some not, some twice. */
  const SEQUENCES: { statuses: string[]; errorCode?: string }[] = [
    { statuses: ['sent', 'delivered'] },
    { statuses: ['delivered', 'sent'] },
    { statuses: ['sent', 'sent', 'delivered', 'delivered'] },
    { statuses: ['queued', 'delivered', 'sent'] },
    { statuses: ['sent', 'undelivered'], errorCode: '30003' },
  ];
  let scheduled = 0;
  async function callbacks() {
    const fresh = fake.messages.slice(scheduled);
    scheduled += fresh.length;
    await Promise.all(
      fresh
        .filter(() => Math.random() < 0.7)
        .map(async (m) => {
          const plan = pick(SEQUENCES);
          const entry = { statuses: plan.statuses, errorCode: plan.errorCode, acked: [] as string[] };
          log.callbacks.set(m.sid, entry);
          for (const status of plan.statuses) {
            for (let i = 0; i < 60; i++) {
              try {
                const [result] = await fake.sendStatusCallbacks(
                  m.sid,
                  [status],
                  plan.errorCode && status === 'undelivered' ? { errorCode: plan.errorCode } : {},
                );
                if (result && result.status >= 200 && result.status < 300) {
                  entry.acked.push(status);
                  break;
                }
              } catch {
                // deliver again
              }
              await sleep(300);
            }
          }
        }),
    );
  }

  async function readInbox() {
    const b = pick(businesses);
    const kind = pick(['rest-list', 'rest-messages', 'trpc-list', 'trpc-filters'] as const);
    try {
      let answer: Answer;
      if (kind === 'rest-list')
        answer = await call(`${baseUrl}/api/v1/businesses/${b.id}/conversations?page_size=25`, {
          headers: { 'x-api-key': b.apiKey },
        });
      else if (kind === 'rest-messages')
        answer = await call(`${baseUrl}/api/v1/businesses/${b.id}/conversations/${pick(b.clients).conversationId}/messages`, {
          headers: { 'x-api-key': b.apiKey },
        });
      else {
        const input = encodeURIComponent(JSON.stringify({ json: kind === 'trpc-list' ? { status: 'open' } : null }));
        answer = await call(`${baseUrl}/api/trpc/inbox.${kind === 'trpc-list' ? 'list' : 'filters'}?input=${input}`, {
          headers: { cookie: `session=${encodeURIComponent(pick(b.cookies))}` },
        });
      }
      count(log.reads, `${kind} ${answer.status}`);
    } catch {
      count(log.reads, `${kind} no answer`);
    }
  }

  /** Read marks and flags on inbound messages: they move the conversation's counters. */
  async function markAndFlag(inboundIds: (businessId: number) => Promise<number[]>) {
    const b = pick(businesses);
    const ids = await inboundIds(b.id);
    if (ids.length === 0) return;
    const headers = { 'content-type': 'application/json', 'x-api-key': b.apiKey };
    try {
      if (Math.random() < 0.6) {
        const chosen = Array.from({ length: 1 + Math.floor(Math.random() * 4) }, () => pick(ids));
        const answer = await call(`${baseUrl}/api/v1/businesses/${b.id}/messages/read`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ message_ids: [...new Set(chosen)], is_read: Math.random() < 0.8 }),
        });
        count(log.marks, `read ${answer.status}`);
      } else {
        const answer = await call(`${baseUrl}/api/v1/businesses/${b.id}/messages/${pick(ids)}/flag`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ flagged: Math.random() < 0.6 }),
        });
        count(log.marks, `flag ${answer.status}`);
      }
    } catch {
      count(log.marks, 'no answer');
    }
  }

  const loops: Promise<void>[] = [];
  const every = (ms: number, task: () => Promise<void>, parallel = 1) => {
    for (let i = 0; i < parallel; i++) {
      loops.push(
        (async () => {
          while (!stopping) {
            const started = Date.now();
            await task().catch(() => {});
            await sleep(Math.max(0, ms * (0.5 + Math.random()) - (Date.now() - started)));
          }
        })(),
      );
    }
  };

  return {
    log,
    start(inboundIds: (businessId: number) => Promise<number[]>) {
      every(150, sendOne, options.concurrency?.sends ?? 3);
      every(400, callbacks);
      every(250, inboundSms, 2);
      every(1500, inboundEmail);
      every(700, note);
      every(800, recordOne);
      every(120, readInbox, 2);
      every(600, () => markAndFlag(inboundIds));
    },
    /** Stops starting new work and waits for what is in flight (deliveries keep retrying until acknowledged). */
    async stop() {
      stopping = true;
      await Promise.all(loops);
    },
    /** One more round of callbacks for messages accepted late (after the load stopped). */
    callbacks,
  };
}
