import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { and, eq, sql } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { db } from '@/server/db/client';
import { messages, webhookEvents } from '@/db/schema';
import { parseEnv } from '@/server/env';
import { verifyTwilioSignature } from '@/server/providers/twilio-signature';
import {
  createClient,
  createConversation,
  createEmailThread,
  createMessage,
  createSmsNumber,
  createTenant,
} from '@/server/testing/factories';
import { match } from '@/server/testing/http';
import { messageOf } from '@/server/testing/messages';
import { listSandboxClients, replyAsClient, sandboxEnabled, sandboxMailbox, sandboxPhone } from './phone';

// The gating test switches providers by overriding what env() answers (every module reads it).
const envOverride = vi.hoisted(() => ({ current: {} as Record<string, unknown> }));
vi.mock('@/server/env', async (importOriginal) => {
  const actual = await importOriginal<typeof import('@/server/env')>();
  return { ...actual, env: () => ({ ...actual.env(), ...envOverride.current }) };
});
afterEach(() => {
  envOverride.current = {};
});

/**
 * A real HTTP server standing in for `next start`: it hands each request to the app's route
 * handler in-process (server/testing/http's router), so replyAsClient's POST crosses a socket,
 * exactly as it does to the running app. PUBLIC_BASE_URL stays http://localhost:3000: signatures
 * are computed and verified over it, wherever the request is sent.
 */
type Seen = { path: string; headers: Record<string, string>; body: Buffer; status: number };
let server: Server;
let target: string;
const seen: Seen[] = [];

beforeAll(async () => {
  server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const url = new URL(req.url!, `http://${req.headers.host}`);
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers.set(k, v);
    const found = match(url.pathname);
    const mod = found ? ((await import(found.file)) as Record<string, (r: Request, c: unknown) => Promise<Response>>) : null;
    const handler = mod?.[req.method ?? 'GET'];
    const response = handler
      ? await handler(new Request(url, { method: req.method, headers, body: new Uint8Array(body) }), {
          params: Promise.resolve(found!.params),
        })
      : new Response('not found', { status: 404 });
    seen.push({ path: url.pathname + url.search, headers: Object.fromEntries(headers), body, status: response.status });
    res.writeHead(response.status, Object.fromEntries(response.headers));
    res.end(Buffer.from(await response.arrayBuffer()));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  target = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** A business with an SMS number, a client, their conversation and one SMS we sent them. */
async function phoneSetup() {
  const t = await createTenant();
  const number = await createSmsNumber(t.business.id);
  const client = await createClient(t.business.id, { name: 'Ava Stone' });
  const conv = await createConversation(t.business.id, client.id);
  const outbound = await createMessage(conv, {
    content: 'See you Thursday at 3?',
    status: 'delivered',
    fromAddress: number.phoneNumber,
    toAddress: client.phoneNumber,
    sentAt: new Date(Date.now() - 60_000),
  });
  return { t, number, client, conv, outbound };
}

const inboundOf = (businessId: number, channel: 'sms' | 'email') =>
  db
    .select()
    .from(messages)
    .where(and(eq(messages.businessId, businessId), eq(messages.channel, channel), eq(messages.direction, 'inbound')));

/** The client's reply as stored: an inbound message, received, in that client's conversation, matching `fields`. */
async function expectStoredReply(
  messageId: number,
  conv: { id: number },
  client: { id: number },
  fields: Record<string, unknown>,
) {
  const stored = await messageOf(messageId);
  expect(stored).toMatchObject({
    conversationId: conv.id,
    clientId: client.id,
    direction: 'inbound',
    status: 'received',
    ...fields,
  });
  return stored;
}

describe('replyAsClient: SMS', () => {
  it('posts a correctly signed Twilio webhook over HTTP; the reply lands in the client’s conversation', async () => {
    const { t, number, client, conv, outbound } = await phoneSetup();
    const result = await replyAsClient(
      t.business.id,
      { channel: 'sms', clientId: client.id, body: 'Yes, 3 works 👍' },
      { targetBaseUrl: target },
    );

    expect(result.providerId).toMatch(/^SM[0-9a-f]{32}$/);
    expect(result.conversationId).toBe(conv.id);
    const request = seen.find((s) => s.body.toString().includes(result.providerId))!;
    expect(request).toMatchObject({ path: '/api/v1/webhooks/twilio/sms/incoming', status: 200 });
    expect(request.headers['content-type']).toBe('application/x-www-form-urlencoded');
    const form = new URLSearchParams(request.body.toString());
    expect(Object.fromEntries(form)).toMatchObject({
      MessageSid: result.providerId,
      From: client.phoneNumber,
      To: number.phoneNumber,
      Body: 'Yes, 3 works 👍',
      NumMedia: '0',
    });
    // The signature is the one Twilio would send: it verifies against PUBLIC_BASE_URL + path.
    const replayed = new Request('http://localhost:3000/api/v1/webhooks/twilio/sms/incoming', {
      method: 'POST',
      headers: { 'x-twilio-signature': request.headers['x-twilio-signature']! },
    });
    expect(() => verifyTwilioSignature(replayed, request.body.toString())).not.toThrow();

    await expectStoredReply(result.messageId!, conv, client, {
      provider: 'twilio',
      providerMessageId: result.providerId,
      fromAddress: client.phoneNumber,
      toAddress: number.phoneNumber,
      content: 'Yes, 3 works 👍',
    });
    const [event] = await db.select().from(webhookEvents).where(eq(webhookEvents.dedupeKey, result.providerId));
    expect(event).toMatchObject({ provider: 'twilio', kind: 'sms_incoming' });

    // The phone: both directions, newest last, with our message's delivery status.
    const phone = await sandboxPhone(t.business.id, client.id);
    expect(phone.businessNumber).toBe(number.phoneNumber);
    expect(phone.messages.map((m) => [m.id, m.direction, m.status])).toEqual([
      [outbound.id, 'outbound', 'delivered'],
      [result.messageId, 'inbound', 'received'],
    ]);
  });

  it('a webhook signed with another token is refused (403) and stores nothing', async () => {
    const { t, client } = await phoneSetup();
    await expect(
      replyAsClient(
        t.business.id,
        { channel: 'sms', clientId: client.id, body: 'forged' },
        { targetBaseUrl: target, twilioAuthToken: 'not-the-auth-token' },
      ),
    ).rejects.toMatchObject({ code: 'unavailable', message: expect.stringMatching(/answered 403: Invalid Twilio signature/) });
    expect(await inboundOf(t.business.id, 'sms')).toHaveLength(0);
  });

  it('says why when there is nothing to text: no SMS number, no client phone, unreachable endpoint', async () => {
    const t = await createTenant();
    const client = await createClient(t.business.id);
    await expect(
      replyAsClient(t.business.id, { channel: 'sms', clientId: client.id, body: 'hi' }, { targetBaseUrl: target }),
    ).rejects.toMatchObject({
      code: 'bad_request',
      message: expect.stringMatching(/no SMS number/),
    });
    await createSmsNumber(t.business.id);
    const noPhone = await createClient(t.business.id, { phoneNumber: null });
    await expect(
      replyAsClient(t.business.id, { channel: 'sms', clientId: noPhone.id, body: 'hi' }, { targetBaseUrl: target }),
    ).rejects.toMatchObject({ code: 'validation' });
    await expect(
      replyAsClient(
        t.business.id,
        { channel: 'sms', clientId: client.id, body: 'hi' },
        { targetBaseUrl: 'http://127.0.0.1:9', timeoutMs: 2000 },
      ),
    ).rejects.toMatchObject({ code: 'unavailable', message: expect.stringMatching(/Could not reach/) });
    // Another business's client is not found.
    const other = await createTenant();
    await expect(
      replyAsClient(other.business.id, { channel: 'sms', clientId: client.id, body: 'hi' }, { targetBaseUrl: target }),
    ).rejects.toMatchObject({ code: 'not_found' });
  });
});

describe('replyAsClient: email', () => {
  /** A business and a client we emailed (a stored Message-ID to reply to). */
  const mailSetup = () =>
    createEmailThread({
      client: { name: 'Pat "PJ" Jones' },
      sent: { content: 'See you Thursday.', provider: 'sandbox', sentAt: new Date(Date.now() - 60_000) },
    });

  it('posts an Inbound Parse multipart webhook that threads to our last email, with HTML and an attachment', async () => {
    const { t, client, conv, sent, ourMessageId } = await mailSetup();
    const pdf = Buffer.from('%PDF-1.4 sandbox test\n');
    const result = await replyAsClient(
      t.business.id,
      {
        channel: 'email',
        clientId: client.id,
        text: 'Thursday works.\nSee you then.',
        html: '<p>Thursday <b>works</b>.</p>',
        attachment: { filename: 'intake form.pdf', contentType: 'application/pdf', contentBase64: pdf.toString('base64') },
      },
      { targetBaseUrl: target },
    );
    expect(result.conversationId).toBe(conv.id);
    const request = seen.find((s) => s.body.includes(result.providerId))!;
    expect(request.path).toMatch(/^\/api\/v1\/email\/webhooks\/sendgrid\/inbound\?secret=/);
    expect(request.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    expect(request.status).toBe(200);

    const stored = await expectStoredReply(result.messageId!, conv, client, {
      provider: 'sendgrid',
      subject: 'Re: Your appointment',
      // Multipart form fields travel with CRLF line breaks, as in a real mail.
      content: 'Thursday works.\r\nSee you then.',
      fromAddress: client.email,
      toAddress: t.business.fromEmail,
      emailMessageId: result.providerId,
      inReplyTo: ourMessageId,
      providerMetadata: { html: '<p>Thursday <b>works</b>.</p>' },
    });
    expect(stored!.attachments).toEqual([
      expect.objectContaining({
        filename: 'intake form.pdf',
        content_type: 'application/pdf',
        size: pdf.length,
        content: pdf.toString('base64'),
      }),
    ]);

    const mailbox = await sandboxMailbox(t.business.id, client.id);
    expect(mailbox.businessAddress).toBe(t.business.fromEmail);
    expect(mailbox.emails.map((e) => [e.id, e.direction, e.subject])).toEqual([
      [result.messageId, 'inbound', 'Re: Your appointment'],
      [sent.id, 'outbound', 'Your appointment'],
    ]);
    expect(mailbox.emails[0]).toMatchObject({
      html: '<p>Thursday <b>works</b>.</p>',
      attachments: [{ filename: 'intake form.pdf', size: pdf.length }],
    });
  });

  it('the mailbox hands the page sanitized HTML only: no scripts, handlers, javascript: links or remote loads', async () => {
    const { t, client, conv } = await mailSetup();
    const hostile = await createMessage(conv, {
      channel: 'email',
      messageType: 'EMAIL',
      direction: 'inbound',
      senderType: 'client',
      subject: 'Hi',
      content: 'Hi',
      status: 'received',
      providerMetadata: {
        html: '<p onclick="alert(1)">Hi <b>there</b></p><script>alert(2)</script><a href="javascript:alert(3)">x</a><img src="https://tracker.example/p.gif"><meta http-equiv="refresh" content="0;url=https://evil.example"><iframe src="https://evil.example"></iframe>',
      },
    });
    const mailbox = await sandboxMailbox(t.business.id, client.id);
    const html = mailbox.emails.find((e) => e.id === hostile.id)!.html!;
    expect(html).toContain('<b>there</b>');
    expect(html).not.toMatch(/<script|onclick|javascript:|<meta|<iframe| src="https:/i);
    expect(html).toContain('data-blocked-src="https://tracker.example/p.gif"');
  });

  it('a client never emailed writes to the business’s sender address with their own subject; a wrong secret is refused', async () => {
    const t = await createTenant();
    const client = await createClient(t.business.id);
    const result = await replyAsClient(
      t.business.id,
      { channel: 'email', clientId: client.id, subject: 'Question', text: 'Do you open Sundays?' },
      { targetBaseUrl: target },
    );
    const stored = await messageOf(result.messageId!);
    expect(stored).toMatchObject({ subject: 'Question', toAddress: t.business.fromEmail, inReplyTo: null, clientId: client.id });

    await expect(
      replyAsClient(
        t.business.id,
        { channel: 'email', clientId: client.id, subject: 'Forged', text: 'x' },
        { targetBaseUrl: target, inboundSecret: 'wrong-secret' },
      ),
    ).rejects.toMatchObject({ code: 'unavailable', message: expect.stringMatching(/answered 403/) });
    expect((await inboundOf(t.business.id, 'email')).map((m) => m.subject)).toEqual(['Question']);
  });
});

describe('client list', () => {
  it('searches by name, phone or email, pages, and shows only the business’s clients', async () => {
    const t = await createTenant();
    const other = await createTenant();
    const ava = await createClient(t.business.id, { name: 'Ava Stone', phoneNumber: '+12125550101', email: 'ava@example.test' });
    const ben = await createClient(t.business.id, { name: 'Ben Ng', phoneNumber: '+12125550102', email: 'ben@example.test' });
    await createClient(t.business.id, { name: '50% Off Fan', phoneNumber: '+12125550103', email: 'fan@example.test' });
    await createClient(other.business.id, { name: 'Ava Elsewhere' });
    // Ben has recent activity, so he comes first.
    await createConversation(t.business.id, ben.id, { lastActivityAt: new Date() });

    const all = await listSandboxClients(t.business.id, { page: 1, pageSize: 2 });
    expect(all).toMatchObject({ total: 3, nextPage: true });
    expect(all.clients[0]!.clientId).toBe(ben.id);
    expect((await listSandboxClients(t.business.id, { page: 2, pageSize: 2 })).clients).toHaveLength(1);
    expect(
      (await listSandboxClients(t.business.id, { search: 'ava', page: 1, pageSize: 25 })).clients.map((c) => c.clientId),
    ).toEqual([ava.id]);
    expect(
      (await listSandboxClients(t.business.id, { search: '5550102', page: 1, pageSize: 25 })).clients.map((c) => c.clientId),
    ).toEqual([ben.id]);
    expect(
      (await listSandboxClients(t.business.id, { search: 'BEN@EXAMPLE', page: 1, pageSize: 25 })).clients.map((c) => c.clientId),
    ).toEqual([ben.id]);
    // LIKE wildcards are literal.
    expect((await listSandboxClients(t.business.id, { search: '50%', page: 1, pageSize: 25 })).total).toBe(1);
    await expect(sandboxPhone(other.business.id, ava.id)).rejects.toMatchObject({ code: 'not_found' });
  });

  it('the phone, the mailbox and the list preview show what reached the client: no note, nothing scheduled or canceled', async () => {
    const { t, client, conv, outbound } = await phoneSetup();
    const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000);
    const email = await createMessage(conv, {
      channel: 'email',
      messageType: 'EMAIL',
      content: 'Your receipt',
      sentAt: minutesAgo(50),
    });
    await createMessage(conv, {
      channel: 'email',
      messageType: 'EMAIL',
      status: 'scheduled',
      content: 'Email later',
      sentAt: minutesAgo(40),
    });
    await createMessage(conv, { status: 'canceled', content: 'Canceled text', sentAt: minutesAgo(30) });
    await createMessage(conv, { status: 'scheduled', content: 'Reminder for tomorrow', sentAt: minutesAgo(20) });
    const note = await createMessage(conv, {
      channel: null,
      messageType: 'NOTE',
      content: 'Client prefers texts after 5pm',
      status: 'sent',
      sentAt: minutesAgo(10),
    });
    // The conversation's own latest is the note: the inbox shows it as one; the client never sees it.
    await db.execute(
      sql`update conversations set last_message_id = ${note.id}, last_message_content = ${note.content}, last_activity_at = now() where id = ${conv.id}`,
    );

    const phone = await sandboxPhone(t.business.id, client.id);
    expect(phone.messages.map((m) => m.id)).toEqual([outbound.id]);
    const mailbox = await sandboxMailbox(t.business.id, client.id);
    expect(mailbox.emails.map((m) => m.id)).toEqual([email.id]);
    const listed = (await listSandboxClients(t.business.id, { page: 1, pageSize: 25 })).clients.find(
      (c) => c.clientId === client.id,
    );
    expect(listed).toMatchObject({ lastMessage: 'See you Thursday at 3?', lastChannel: 'sms' });
  });
});

// The tRPC procedures' gating is tested with the router (server/trpc/sandbox-router.test.ts).
describe('gating: the sandbox exists only with the sandbox providers', () => {
  it('with Twilio or SMTP configured the sandbox is off and nothing is signed', async () => {
    const { t, client } = await phoneSetup();
    for (const override of [{ smsProvider: 'twilio' }, { emailProvider: 'smtp' }]) {
      envOverride.current = override;
      expect(sandboxEnabled()).toBe(false);
      await expect(
        replyAsClient(t.business.id, { channel: 'sms', clientId: client.id, body: 'hi' }, { targetBaseUrl: target }),
      ).rejects.toMatchObject({ code: 'not_found' });
    }
    expect(await inboundOf(t.business.id, 'sms')).toHaveLength(0);
  });

  it('in production the sandbox exists only with SANDBOX_ENABLED=true, even on the sandbox providers', async () => {
    const base = { NODE_ENV: 'production', PLATFORM_API_KEY: 'p'.repeat(20), SESSION_SECRET: 's'.repeat(20) };
    expect(sandboxEnabled(parseEnv(base))).toBe(false);
    expect(sandboxEnabled(parseEnv({ ...base, SANDBOX_ENABLED: 'false' }))).toBe(false);
    expect(sandboxEnabled(parseEnv({ ...base, SANDBOX_ENABLED: 'true' }))).toBe(true);
    expect(sandboxEnabled(parseEnv({ ...base, SANDBOX_ENABLED: 'true', SMS_PROVIDER: 'twilio', TWILIO_AUTH_TOKEN: 'x' }))).toBe(
      false,
    );
    expect(sandboxEnabled(parseEnv({ NODE_ENV: 'development' }))).toBe(true);
    envOverride.current = { sandboxAllowed: false };
    expect(sandboxEnabled()).toBe(false);
  });

  it('a production build on the sandbox providers verifies with secrets derived from SESSION_SECRET, never the public development ones', () => {
    const base = {
      NODE_ENV: 'production',
      PLATFORM_API_KEY: 'p'.repeat(20),
      SESSION_SECRET: 's'.repeat(20),
      SANDBOX_ENABLED: 'true',
    };
    const sandbox = parseEnv(base);
    expect(sandboxEnabled(sandbox)).toBe(true);
    expect(sandbox.twilio.authToken).toMatch(/^[\w-]{40,}$/);
    expect(sandbox.twilio.authToken).not.toBe(parseEnv({ NODE_ENV: 'development' }).twilio.authToken);
    expect(sandbox.emailInboundSecret).toMatch(/^[\w-]{40,}$/);
    expect(sandbox.emailInboundSecret).not.toBe(sandbox.twilio.authToken);
    expect(parseEnv({ ...base, SESSION_SECRET: 't'.repeat(20) }).twilio.authToken).not.toBe(sandbox.twilio.authToken);
    // Real providers: only configured secrets; no derived ones, and no sandbox.
    const real = parseEnv({
      ...base,
      TWILIO_ACCOUNT_SID: 'AC' + '1'.repeat(32),
      TWILIO_AUTH_TOKEN: 'real-token',
      SMTP_URL: 'smtp://mail.example.test:587',
    });
    expect(real).toMatchObject({
      smsProvider: 'twilio',
      emailProvider: 'smtp',
      emailInboundSecret: undefined,
      twilio: { authToken: 'real-token' },
    });
    expect(sandboxEnabled(real)).toBe(false);
  });
});
