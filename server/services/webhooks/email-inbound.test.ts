import { randomUUID } from 'node:crypto';
import { and, eq, or, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db } from '@/server/db/client';
import { clients, conversations, messages, webhookEvents } from '@/db/schema';
import { createClient, createConversation, createEmailThread, createTenant } from '@/server/testing/factories';
import { jsonOf, match } from '@/server/testing/http';
import { multipartBody, postBytes, type MultipartFile } from '@/server/testing/webhooks';
import { onlyRow } from '@/server/testing/messages';

const INBOUND = '/api/v1/email/webhooks/sendgrid/inbound';
const SECRET = 'dev-inbound-secret';

type Mail = {
  from: string;
  to: string;
  subject?: string;
  text?: string;
  html?: string;
  messageId?: string | null;
  inReplyTo?: string;
  references?: string;
  envelope?: { to: string[]; from: string } | null;
};

/** The fields SendGrid Inbound Parse posts (unparsed mode), with a raw header block. */
function parseFields(mail: Mail, files: MultipartFile[] = []): Record<string, string> {
  const headerLines = [
    'Received: by mx0047p1mdw1.sendgrid.net with SMTP id 6WCVv7KAWn Wed, 27 Nov 2026 14:03:05 +0000 (UTC)',
    `From: ${mail.from}`,
    `To: ${mail.to}`,
    `Subject: ${mail.subject ?? 'Re: your appointment'}`,
    'Date: Wed, 27 Nov 2026 09:03:01 -0500',
    ...(mail.messageId === null ? [] : [`Message-ID: ${mail.messageId ?? `<${randomUUID()}@mail.example.test>`}`]),
    ...(mail.inReplyTo ? [`In-Reply-To: ${mail.inReplyTo}`] : []),
    ...(mail.references ? [`References: ${mail.references}`] : []),
    'MIME-Version: 1.0',
    'Content-Type: multipart/mixed; boundary="000000000000abcdef"',
  ];
  const fields: Record<string, string> = {
    headers: headerLines.join('\n') + '\n',
    dkim: '{@example.test : pass}',
    to: mail.to,
    from: mail.from,
    subject: mail.subject ?? 'Re: your appointment',
    text: mail.text ?? 'Thursday works for me.\n',
    sender_ip: '209.85.160.180',
    spam_score: '0.1',
    charsets: JSON.stringify({ to: 'UTF-8', from: 'UTF-8', subject: 'UTF-8', text: 'UTF-8' }),
    SPF: 'pass',
  };
  if (mail.html) fields.html = mail.html;
  const envelope = mail.envelope === undefined ? null : mail.envelope;
  if (envelope) fields.envelope = JSON.stringify(envelope);
  if (files.length) {
    fields.attachments = String(files.length);
    fields['attachment-info'] = JSON.stringify(
      Object.fromEntries(files.map((f) => [f.field, { filename: f.filename, name: f.filename, type: f.contentType }])),
    );
  }
  return fields;
}

async function postInbound(mail: Mail, files: MultipartFile[] = [], query = `?secret=${SECRET}`) {
  const { contentType, bytes } = await multipartBody(parseFields(mail, files), files);
  return postBytes(`${INBOUND}${query}`, { 'content-type': contentType }, bytes);
}

/** A hand-written multipart body, for parts whose bytes are not UTF-8 (FormData would re-encode them). */
function rawMultipart(parts: { name: string; value: Buffer | string }[]) {
  const boundary = `----inbound${randomUUID().replace(/-/g, '')}`;
  const chunks: Buffer[] = [];
  for (const part of parts) {
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"\r\n\r\n`));
    chunks.push(typeof part.value === 'string' ? Buffer.from(part.value) : part.value);
    chunks.push(Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { contentType: `multipart/form-data; boundary=${boundary}`, bytes: Buffer.concat(chunks) };
}

const eventCount = async () => (await db.select({ n: sql<number>`count(*)::int` }).from(webhookEvents))[0]!.n;
const inboundEmailsOf = (businessId: number) =>
  db
    .select()
    .from(messages)
    .where(and(eq(messages.businessId, businessId), eq(messages.channel, 'email'), eq(messages.direction, 'inbound')));
/** Events are keyed `<business id>:<Message-ID>` (deduplicated per receiving business), or the bare Message-ID when no business receives it. */
const eventByMessageId = (messageId: string) =>
  db
    .select()
    .from(webhookEvents)
    .where(
      and(
        eq(webhookEvents.kind, 'email_inbound'),
        or(
          eq(webhookEvents.dedupeKey, messageId),
          sql`right(${webhookEvents.dedupeKey}, ${messageId.length + 1}) = ${`:${messageId}`}`,
        ),
      ),
    );

/** The inbound route's handler, called directly with a Request of the test's own making. */
async function routeFor(path: string) {
  const found = match(new URL(path, 'http://localhost:3000').pathname)!;
  const mod = (await import(found.file)) as { POST: (req: Request, ctx: unknown) => Promise<Response> };
  return { handler: mod.POST, params: Promise.resolve(found.params) };
}

/** A business with a client and an outbound email we sent them (stored Message-ID). */
const threadSetup = () => createEmailThread();

describe('POST /email/webhooks/sendgrid/inbound — secret', () => {
  it('a wrong secret is 403 and stores nothing', async () => {
    const { t, client } = await threadSetup();
    const before = await eventCount();
    const res = await postInbound({ from: client.email!, to: t.business.fromEmail! }, [], '?secret=wrong-secret');
    expect(res.status).toBe(403);
    expect(await eventCount()).toBe(before);
    expect(await inboundEmailsOf(t.business.id)).toHaveLength(0);
  });

  it('a wrong secret is 403 before the body is read: a post whose body never ends is answered', async () => {
    const { handler, params } = await routeFor(`${INBOUND}?secret=wrong-secret`);
    // A body stream that sends one chunk and then never ends: reading it would wait forever.
    const endless = new ReadableStream<Uint8Array>({ start: (c) => c.enqueue(new TextEncoder().encode('--x\r\n')) });
    const req = new Request(`http://localhost:3000${INBOUND}?secret=wrong-secret`, {
      method: 'POST',
      headers: { 'content-type': 'multipart/form-data; boundary=x', host: 'localhost:3000' },
      body: endless,
      duplex: 'half',
    } as RequestInit);
    const res = await Promise.race([handler(req, { params }), new Promise<null>((r) => setTimeout(() => r(null), 3_000))]);
    expect(res?.status).toBe(403);
  });

  it('a missing secret is 403; a secret that is a prefix of the real one is 403', async () => {
    const { t, client } = await threadSetup();
    const before = await eventCount();
    expect((await postInbound({ from: client.email!, to: t.business.fromEmail! }, [], '')).status).toBe(403);
    expect((await postInbound({ from: client.email!, to: t.business.fromEmail! }, [], '?secret=')).status).toBe(403);
    expect(
      (await postInbound({ from: client.email!, to: t.business.fromEmail! }, [], `?secret=${SECRET.slice(0, -1)}`)).status,
    ).toBe(403);
    expect(await eventCount()).toBe(before);
    expect(await inboundEmailsOf(t.business.id)).toHaveLength(0);
  });

  it('a body that is not multipart/form-data is 400', async () => {
    const res = await postBytes(
      `${INBOUND}?secret=${SECRET}`,
      { 'content-type': 'application/json' },
      Buffer.from('{"from":"a@b.test"}'),
    );
    expect(res.status).toBe(400);
  });
});

describe('POST /email/webhooks/sendgrid/inbound — threading and clients', () => {
  it('a reply whose In-Reply-To names our Message-ID threads into that conversation, even from another address', async () => {
    const { t, client, conv, ourMessageId } = await threadSetup();
    const clientsBefore = await db.select().from(clients).where(eq(clients.businessId, t.business.id));
    const replyId = `<${randomUUID()}@mail.elsewhere.test>`;
    const res = await postInbound({
      from: 'Sam Partner <sam.partner@elsewhere.test>',
      to: `Studio <${t.business.fromEmail}>`,
      subject: 'Re: Your appointment',
      text: 'Replying for Pat: Thursday is fine.',
      html: '<p>Replying for Pat: Thursday is fine.</p>',
      messageId: replyId,
      inReplyTo: ourMessageId,
      references: ourMessageId,
    });
    expect(res.status).toBe(200);
    const row = onlyRow(await inboundEmailsOf(t.business.id));
    expect(row).toMatchObject({
      conversationId: conv.id,
      clientId: client.id,
      channel: 'email',
      messageType: 'EMAIL',
      direction: 'inbound',
      senderType: 'client',
      status: 'received',
      subject: 'Re: Your appointment',
      content: 'Replying for Pat: Thursday is fine.',
      fromAddress: 'sam.partner@elsewhere.test',
      emailMessageId: replyId,
      inReplyTo: ourMessageId,
      isRead: false,
    });
    // No client was created for the other sender.
    const clientsAfter = await db.select().from(clients).where(eq(clients.businessId, t.business.id));
    expect(clientsAfter.map((c) => c.id).sort()).toEqual(clientsBefore.map((c) => c.id).sort());
    expect(clientsAfter.some((c) => c.email?.toLowerCase() === 'sam.partner@elsewhere.test')).toBe(false);
    const [c] = await db.select().from(conversations).where(eq(conversations.id, conv.id));
    expect(c).toMatchObject({ unreadCount: 1, lastMessageId: row.id, lastChannel: 'email' });
    const [event] = await eventByMessageId(replyId);
    expect(event).toMatchObject({ provider: 'sendgrid', kind: 'email_inbound', outcome: 'processed', businessId: t.business.id });
  });

  it('References alone (no In-Reply-To) also threads the reply', async () => {
    const { t, client, conv, ourMessageId } = await threadSetup();
    await postInbound({
      from: 'someone-else@elsewhere.test',
      to: t.business.fromEmail!,
      references: `<older-${randomUUID()}@elsewhere.test> ${ourMessageId}`,
    });
    const [row] = await inboundEmailsOf(t.business.id);
    expect(row).toMatchObject({ conversationId: conv.id, clientId: client.id, fromAddress: 'someone-else@elsewhere.test' });
  });

  it('a reply threading into a resolved conversation reopens it', async () => {
    const { t, conv, ourMessageId, client } = await threadSetup();
    await db.update(conversations).set({ status: 'resolved' }).where(eq(conversations.id, conv.id));
    await postInbound({ from: client.email!, to: t.business.fromEmail!, inReplyTo: ourMessageId });
    const [c] = await db.select().from(conversations).where(eq(conversations.id, conv.id));
    expect(c!.status).toBe('open');
  });

  it('a new sender becomes a lead with their email and display name, in a new conversation', async () => {
    const t = await createTenant();
    const address = `jane.${randomUUID().slice(0, 8)}@example.test`;
    const res = await postInbound({
      from: `"Jane Doe" <${address}>`,
      to: t.business.fromEmail!,
      subject: 'Do you have openings?',
      text: 'Hi, any openings Saturday?',
    });
    expect(res.status).toBe(200);
    const leads = await db
      .select()
      .from(clients)
      .where(and(eq(clients.businessId, t.business.id), sql`lower(${clients.email}) = ${address}`));
    expect(leads).toHaveLength(1);
    expect(leads[0]).toMatchObject({ clientType: 'lead', name: 'Jane Doe' });
    const convs = await db.select().from(conversations).where(eq(conversations.clientId, leads[0]!.id));
    expect(convs).toHaveLength(1);
    expect(convs[0]!.unreadCount).toBe(1);
    const [row] = await inboundEmailsOf(t.business.id);
    expect(row).toMatchObject({
      clientId: leads[0]!.id,
      conversationId: convs[0]!.id,
      fromAddress: address,
      subject: 'Do you have openings?',
      content: 'Hi, any openings Saturday?',
    });
  });

  it('an existing client is matched by address, case-insensitively; no new client', async () => {
    const t = await createTenant();
    const client = await createClient(t.business.id, { email: `Pat.Client.${randomUUID().slice(0, 6)}@Example.test` });
    const conv = await createConversation(t.business.id, client.id);
    await postInbound({ from: `Pat <${client.email!.toLowerCase()}>`, to: t.business.fromEmail!.toUpperCase() });
    const [row] = await inboundEmailsOf(t.business.id);
    expect(row).toMatchObject({ clientId: client.id, conversationId: conv.id });
    expect(await db.select().from(clients).where(eq(clients.businessId, t.business.id))).toHaveLength(1);
  });

  it('an In-Reply-To naming a Message-ID of another business does not thread across businesses', async () => {
    const other = await threadSetup();
    const t = await createTenant();
    const address = `lee.${randomUUID().slice(0, 8)}@example.test`;
    await postInbound({ from: address, to: t.business.fromEmail!, inReplyTo: other.ourMessageId });
    const [row] = await inboundEmailsOf(t.business.id);
    expect(row!.conversationId).not.toBe(other.conv.id);
    expect(row!.businessId).toBe(t.business.id);
    expect(await inboundEmailsOf(other.t.business.id)).toHaveLength(0);
  });

  it('the business is chosen by the envelope recipient when the envelope is present', async () => {
    const a = await createTenant();
    const b = await createTenant();
    const address = `kim.${randomUUID().slice(0, 8)}@example.test`;
    await postInbound({ from: address, to: `${a.business.fromEmail}`, envelope: { to: [b.business.fromEmail!], from: address } });
    expect(await inboundEmailsOf(b.business.id)).toHaveLength(1);
    expect(await inboundEmailsOf(a.business.id)).toHaveLength(0);
  });
});

describe('POST /email/webhooks/sendgrid/inbound — attachments, unknown recipients, duplicates', () => {
  it('attachments are stored with filename, content_type and size (binary bytes intact)', async () => {
    const t = await createTenant();
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0xff, 0xfe, 0x80, 0x7f, 0x00, 0x01]);
    const text = 'Allergies: none\nNotes: ünïcödé ✓\n';
    await postInbound(
      { from: `client.${randomUUID().slice(0, 8)}@example.test`, to: t.business.fromEmail!, text: 'See attached' },
      [
        { field: 'attachment1', filename: 'photo.png', contentType: 'image/png', content: png },
        { field: 'attachment2', filename: 'intake form.txt', contentType: 'text/plain', content: text },
      ],
    );
    const [row] = await inboundEmailsOf(t.business.id);
    expect(row!.attachments).toHaveLength(2);
    const byName = new Map(row!.attachments!.map((a) => [a.filename, a]));
    expect(byName.get('photo.png')).toMatchObject({ filename: 'photo.png', content_type: 'image/png', size: png.length });
    expect(byName.get('intake form.txt')).toMatchObject({
      content_type: expect.stringMatching(/^text\/plain/),
      size: Buffer.byteLength(text),
    });
    expect(Buffer.from(byName.get('photo.png')!.content!, 'base64').equals(png)).toBe(true);
    expect(Buffer.from(byName.get('intake form.txt')!.content!, 'base64').toString()).toBe(text);
  });

  it('a to that no business owns is stored as ignored, with no message and no client', async () => {
    const before = await db.select({ n: sql<number>`count(*)::int` }).from(messages);
    const messageId = `<${randomUUID()}@mail.example.test>`;
    const sender = `nobody.${randomUUID().slice(0, 8)}@example.test`;
    const res = await postInbound({ from: sender, to: 'info@unknown-business.test', messageId });
    expect(res.status).toBe(200);
    const [event] = await eventByMessageId(messageId);
    expect(event).toMatchObject({ outcome: 'ignored', businessId: null });
    expect(event!.error).toMatch(/unknown-business\.test/);
    expect(await db.select({ n: sql<number>`count(*)::int` }).from(messages)).toEqual(before);
    expect(await db.select().from(clients).where(eq(clients.email, sender))).toHaveLength(0);
  });

  it('the same Message-ID twice is one message and one event (the second answer says duplicate)', async () => {
    const t = await createTenant();
    const messageId = `<${randomUUID()}@mail.example.test>`;
    const mail = { from: `twice.${randomUUID().slice(0, 8)}@example.test`, to: t.business.fromEmail!, messageId };
    const first = await postInbound(mail);
    expect(await jsonOf(first)).toEqual({ status: 'accepted' });
    const second = await postInbound({ ...mail, text: 'the same mail, redelivered with another body encoding' });
    expect(second.status).toBe(200);
    expect(await jsonOf(second)).toEqual({ status: 'duplicate' });
    expect(await inboundEmailsOf(t.business.id)).toHaveLength(1);
    expect(await eventByMessageId(messageId)).toHaveLength(1);
  });

  it('the same Message-ID posted concurrently is still one message', async () => {
    const t = await createTenant();
    const mail = {
      from: `race.${randomUUID().slice(0, 8)}@example.test`,
      to: t.business.fromEmail!,
      messageId: `<${randomUUID()}@mail.example.test>`,
    };
    const responses = await Promise.all([1, 2, 3, 4].map(() => postInbound(mail)));
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect(await inboundEmailsOf(t.business.id)).toHaveLength(1);
    expect(await db.select().from(clients).where(eq(clients.businessId, t.business.id))).toHaveLength(1);
  });

  it('a mail without a Message-ID is still stored once per distinct body', async () => {
    const t = await createTenant();
    const mail = { from: `noid.${randomUUID().slice(0, 8)}@example.test`, to: t.business.fromEmail!, messageId: null };
    expect((await postInbound(mail)).status).toBe(200);
    expect(onlyRow(await inboundEmailsOf(t.business.id)).emailMessageId).toBeNull();
  });

  it('a hand-written multipart body (no attachments) is parsed the same way', async () => {
    const t = await createTenant();
    const sender = `hand.${randomUUID().slice(0, 8)}@example.test`;
    const { contentType, bytes } = rawMultipart([
      { name: 'from', value: `Hand Written <${sender}>` },
      { name: 'to', value: t.business.fromEmail! },
      { name: 'subject', value: 'Créneau samedi ✓' },
      { name: 'text', value: 'Bonjour, à samedi !' },
      { name: 'headers', value: `Message-ID: <${randomUUID()}@example.test>\nSubject: x\n` },
      { name: 'charsets', value: JSON.stringify({ from: 'UTF-8', to: 'UTF-8', subject: 'UTF-8', text: 'UTF-8' }) },
    ]);
    expect((await postBytes(`${INBOUND}?secret=${SECRET}`, { 'content-type': contentType }, bytes)).status).toBe(200);
    const [row] = await inboundEmailsOf(t.business.id);
    expect(row).toMatchObject({ fromAddress: sender, subject: 'Créneau samedi ✓', content: 'Bonjour, à samedi !' });
  });

  // Inbound Parse posts each field in the mail's own charset, named in the `charsets` field.
  it('a text part in the charset named by `charsets` (iso-8859-1) is stored correctly decoded', async () => {
    const t = await createTenant();
    const sender = `latin.${randomUUID().slice(0, 8)}@example.test`;
    const { contentType, bytes } = rawMultipart([
      { name: 'from', value: sender },
      { name: 'to', value: t.business.fromEmail! },
      { name: 'subject', value: 'Re: rendez-vous' },
      { name: 'text', value: Buffer.from('Café à 10h, merci', 'latin1') },
      { name: 'headers', value: `Message-ID: <${randomUUID()}@example.test>\nContent-Type: text/plain; charset=iso-8859-1\n` },
      { name: 'charsets', value: JSON.stringify({ from: 'UTF-8', to: 'UTF-8', subject: 'UTF-8', text: 'iso-8859-1' }) },
    ]);
    expect((await postBytes(`${INBOUND}?secret=${SECRET}`, { 'content-type': contentType }, bytes)).status).toBe(200);
    const [row] = await inboundEmailsOf(t.business.id);
    expect(row!.content).toBe('Café à 10h, merci');
  });
});
