import { and, eq, inArray } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db } from '@/server/db/client';
import { businessEmailSenders, clients, messages } from '@/db/schema';
import { createBusinessApiKey } from '@/server/services/auth';
import { createBusiness, createClient, createTenant } from '@/server/testing/factories';
import { api, jsonOf, locsOf } from '@/server/testing/http';
import { expectAccepted, messageCount as countFor, messageOf as rowOf } from '@/server/testing/messages';
import { sendJobsFor } from '@/server/testing/send-jobs';

/** docs/api.md#sending-messages, #queue-mode, #limits: `POST /businesses/{id}/email`. */

async function tenant() {
  const t = await createTenant();
  const headers = { 'x-api-key': t.apiKey };
  const send = (body: unknown) => api.post(`/api/v1/businesses/${t.business.id}/email`, { headers, body });
  return { ...t, headers, send };
}

/** The messages' send jobs as { queue, message id }, in message id order. */
const jobsFor = async (ids: number[]) => (await sendJobsFor(ids)).map((j) => ({ name: j.name, message_id: j.message_id }));

const MiB = 1024 * 1024;

describe('POST /businesses/{id}/email', () => {
  it('queues an email to a client by id, from the business sender, with its email.send job', async () => {
    const t = await tenant();
    const c = await createClient(t.business.id, { email: 'Maya.Lopez@Example.test' });
    const res = await t.send({
      sender_type: 'staff',
      staff_id: t.owner.id,
      messages: [{ subject: 'Your appointment', message: 'See you Friday at 10.', client_id: c.id }],
    });
    const body = await expectAccepted(res);
    const row = await rowOf(body.message_ids[0]);
    expect(row).toMatchObject({
      channel: 'email',
      messageType: 'EMAIL',
      direction: 'outbound',
      status: 'queued',
      subject: 'Your appointment',
      content: 'See you Friday at 10.',
      fromAddress: t.business.fromEmail,
      toAddress: 'maya.lopez@example.test',
      clientId: c.id,
      staffId: t.owner.id,
      attempts: 1,
      requestId: body.request_id,
      segments: null,
    });
    expect(await jobsFor(body.message_ids)).toEqual([{ name: 'email.send', message_id: body.message_ids[0] }]);
  });

  it('to_email finds the client case-insensitively, or creates a lead', async () => {
    const t = await tenant();
    const known = await createClient(t.business.id, { email: 'known@example.test' });
    const res = await t.send({
      sender_type: 'staff',
      messages: [
        { subject: 's', message: 'to a known client', to_email: 'KNOWN@Example.test' },
        { subject: 's', message: 'to a stranger', to_email: 'New.Person@Example.test' },
      ],
    });
    expect(res.status).toBe(200);
    const { message_ids } = await jsonOf(res);
    expect(await rowOf(message_ids[0])).toMatchObject({ clientId: known.id, toAddress: 'known@example.test' });
    const second = await rowOf(message_ids[1]);
    expect(second.toAddress).toBe('new.person@example.test');
    const [lead] = await db.select().from(clients).where(eq(clients.id, second.clientId));
    expect(lead).toMatchObject({ clientType: 'lead', businessId: t.business.id });
    expect(lead!.email!.toLowerCase()).toBe('new.person@example.test');
  });

  it('a to_email with surrounding spaces is trimmed before it is validated', async () => {
    const t = await tenant();
    const known = await createClient(t.business.id, { email: 'spaces@example.test' });
    const res = await t.send({
      sender_type: 'staff',
      messages: [{ subject: 's', message: 'm', to_email: '  Spaces@example.test ' }],
    });
    expect(res.status).toBe(200);
    expect(await rowOf((await jsonOf(res)).message_ids[0])).toMatchObject({
      clientId: known.id,
      toAddress: 'spaces@example.test',
    });
  });

  it('from_email (a declared sender of the business) overrides the default; a business without one and no from_email is a 422', async () => {
    const t = await tenant();
    await db.insert(businessEmailSenders).values({ businessId: t.business.id, email: 'front.desk@studio.test' });
    const c = await createClient(t.business.id);
    const { message_ids } = await jsonOf(
      await t.send({
        sender_type: 'staff',
        from_email: 'Front.Desk@Studio.test',
        messages: [{ subject: 's', message: 'm', client_id: c.id }],
      }),
    );
    expect((await rowOf(message_ids[0])).fromAddress).toBe('front.desk@studio.test');

    const bare = await createBusiness({ fromEmail: null });
    const key = await createBusinessApiKey(bare.id);
    const bc = await createClient(bare.id);
    const res = await api.post(`/api/v1/businesses/${bare.id}/email`, {
      headers: { 'x-api-key': key },
      body: { sender_type: 'staff', messages: [{ subject: 's', message: 'm', client_id: bc.id }] },
    });
    expect(res.status).toBe(422);
    expect(await locsOf(res)).toEqual([['body', 'from_email']]);
    expect(await countFor(bare.id)).toBe(0);
  });

  it('subject and message are required: 422 at messages[i].subject / .message, and nothing is stored', async () => {
    const t = await tenant();
    const c = await createClient(t.business.id);
    const noSubject = await t.send({ sender_type: 'staff', messages: [{ message: 'Hello', client_id: c.id }] });
    expect(noSubject.status).toBe(422);
    expect(await locsOf(noSubject)).toEqual([['body', 'messages', 0, 'subject']]);
    const several = await t.send({
      sender_type: 'staff',
      messages: [
        { subject: 'fine', message: 'fine', client_id: c.id },
        { subject: 'no body', client_id: c.id },
        { message: 'no subject', to_email: 'x@example.test' },
        { subject: '', message: 'empty subject', client_id: c.id },
      ],
    });
    expect(several.status).toBe(422);
    expect(await locsOf(several)).toEqual([
      ['body', 'messages', 1, 'message'],
      ['body', 'messages', 2, 'subject'],
      ['body', 'messages', 3, 'subject'],
    ]);
    expect(await countFor(t.business.id)).toBe(0);
  });

  it('one of to_email or client_id is required; a bad address or unknown client is a 422 with its loc', async () => {
    const t = await tenant();
    expect(await locsOf(await t.send({ sender_type: 'staff', messages: [{ subject: 's', message: 'm' }] }))).toEqual([
      ['body', 'messages', 0, 'to_email'],
    ]);
    expect(
      await locsOf(
        await t.send({ sender_type: 'staff', messages: [{ subject: 's', message: 'm', to_email: 'not-an-address' }] }),
      ),
    ).toEqual([['body', 'messages', 0, 'to_email']]);
    const unknown = await t.send({ sender_type: 'staff', messages: [{ subject: 's', message: 'm', client_id: 2_000_000_000 }] });
    expect(unknown.status).toBe(422);
    expect(await locsOf(unknown)).toEqual([['body', 'messages', 0, 'client_id']]);
    const noAddress = await createClient(t.business.id, { email: null });
    const res = await t.send({ sender_type: 'staff', messages: [{ subject: 's', message: 'm', client_id: noAddress.id }] });
    expect(res.status).toBe(422);
    expect(await locsOf(res)).toEqual([['body', 'messages', 0, 'client_id']]);
    expect(await countFor(t.business.id)).toBe(0);
  });

  it('stores cc and bcc (normalised to lower case) and the html part', async () => {
    const t = await tenant();
    const c = await createClient(t.business.id);
    const res = await t.send({
      sender_type: 'staff',
      messages: [
        {
          subject: 'Invoice',
          message: 'Attached.',
          html: '<p>Attached.</p>',
          client_id: c.id,
          cc_email: ['Owner@Studio.test', 'b@example.test'],
          bcc_email: ['Audit@Studio.test'],
        },
      ],
    });
    expect(res.status).toBe(200);
    const row = await rowOf((await jsonOf(res)).message_ids[0]);
    expect(row.cc).toEqual(['owner@studio.test', 'b@example.test']);
    expect(row.bcc).toEqual(['audit@studio.test']);
    expect(row.providerMetadata).toMatchObject({ html: '<p>Attached.</p>' });
    const bad = await t.send({
      sender_type: 'staff',
      messages: [{ subject: 's', message: 'm', client_id: c.id, cc_email: ['ok@example.test', 'nope'] }],
    });
    expect(await locsOf(bad)).toEqual([['body', 'messages', 0, 'cc_email', 1]]);
  });

  it('stores base64 attachments with their decoded size, and url attachments without one', async () => {
    const t = await tenant();
    const c = await createClient(t.business.id);
    const pdf = Buffer.from('%PDF-1.4\n% a tiny receipt\n');
    const res = await t.send({
      sender_type: 'staff',
      messages: [
        {
          subject: 'Receipt',
          message: 'Your receipt is attached.',
          client_id: c.id,
          attachments: [
            { filename: 'receipt.pdf', content_type: 'application/pdf', content: pdf.toString('base64') },
            { filename: 'menu.pdf', url: 'https://cdn.example.test/menu.pdf' },
          ],
        },
      ],
    });
    expect(res.status).toBe(200);
    const row = await rowOf((await jsonOf(res)).message_ids[0]);
    expect(row.attachments).toHaveLength(2);
    expect(row.attachments![0]).toMatchObject({
      filename: 'receipt.pdf',
      content_type: 'application/pdf',
      url: null,
      size: pdf.length,
    });
    expect(Buffer.from(row.attachments![0]!.content!, 'base64').equals(pdf)).toBe(true);
    expect(row.attachments![1]).toMatchObject({
      filename: 'menu.pdf',
      content_type: null,
      url: 'https://cdn.example.test/menu.pdf',
      size: null,
    });
  });

  it('the stored size of a line-wrapped (MIME) base64 attachment is its decoded size', async () => {
    const t = await tenant();
    const c = await createClient(t.business.id);
    const bytes = Buffer.alloc(3000, 7);
    const wrapped = bytes.toString('base64').replace(/.{76}/g, '$&\r\n');
    const res = await t.send({
      sender_type: 'staff',
      messages: [{ subject: 's', message: 'm', client_id: c.id, attachments: [{ filename: 'a.bin', content: wrapped }] }],
    });
    expect(res.status).toBe(200);
    const row = await rowOf((await jsonOf(res)).message_ids[0]);
    expect(row.attachments![0]!.size).toBe(3000);
  });

  it('an attachment of exactly 5 MiB decoded is accepted; one byte more is a 413 and nothing is stored', async () => {
    const t = await tenant();
    const c = await createClient(t.business.id);
    const item = (n: number) => ({
      subject: 'big',
      message: 'm',
      client_id: c.id,
      attachments: [{ filename: 'big.bin', content: Buffer.alloc(n, 1).toString('base64') }],
    });
    const over = await t.send({
      sender_type: 'staff',
      messages: [{ subject: 'ok', message: 'm', client_id: c.id }, item(5 * MiB + 1)],
    });
    expect(over.status).toBe(413);
    expect(await jsonOf(over)).toEqual({ detail: expect.stringMatching(/5 MiB/) });
    expect(await countFor(t.business.id)).toBe(0);
    const exact = await t.send({ sender_type: 'staff', messages: [item(5 * MiB)] });
    expect(exact.status).toBe(200);
    const row = await rowOf((await jsonOf(exact)).message_ids[0]);
    expect(row.attachments![0]!.size).toBe(5 * MiB);
  });

  it('attachment validation: a non-http url, neither content nor url, non-base64 content, a bad media type → 422', async () => {
    const t = await tenant();
    const c = await createClient(t.business.id);
    const att = async (a: Record<string, unknown>) =>
      locsOf(
        await t.send({ sender_type: 'staff', messages: [{ subject: 's', message: 'm', client_id: c.id, attachments: [a] }] }),
      );
    expect(await att({ filename: 'x.pdf', url: 'ftp://files.example.test/x.pdf' })).toEqual([
      ['body', 'messages', 0, 'attachments', 0, 'url'],
    ]);
    expect(await att({ filename: 'x.pdf', url: 'javascript:alert(1)' })).toEqual([
      ['body', 'messages', 0, 'attachments', 0, 'url'],
    ]);
    expect(await att({ filename: 'x.pdf', url: 'file:///etc/passwd' })).toEqual([
      ['body', 'messages', 0, 'attachments', 0, 'url'],
    ]);
    expect(await att({ filename: 'x.pdf' })).toEqual([['body', 'messages', 0, 'attachments', 0, 'content']]);
    expect(await att({ filename: 'x.pdf', content: 'not base64!' })).toEqual([
      ['body', 'messages', 0, 'attachments', 0, 'content'],
    ]);
    expect(await att({ filename: 'x.pdf', content: 'QQ==', content_type: 'pdf' })).toEqual([
      ['body', 'messages', 0, 'attachments', 0, 'content_type'],
    ]);
    expect(await att({ content: 'QQ==' })).toEqual([['body', 'messages', 0, 'attachments', 0, 'filename']]);
    expect(await countFor(t.business.id)).toBe(0);
  });

  it('a client opted out of email is stored failed with error_code opted_out and gets no job; the others are queued', async () => {
    const t = await tenant();
    const out = await createClient(t.business.id, { optedOutEmail: true });
    const smsOnlyOut = await createClient(t.business.id, { optedOutSms: true });
    const res = await t.send({
      sender_type: 'staff',
      messages: [
        { subject: 'Promo', message: 'Spring sale', client_id: out.id },
        { subject: 'Promo', message: 'Spring sale', client_id: smsOnlyOut.id },
      ],
    });
    expect(res.status).toBe(200);
    const { message_ids } = await jsonOf(res);
    expect(await rowOf(message_ids[0])).toMatchObject({
      status: 'failed',
      errorCode: 'opted_out',
      errorMessage: expect.any(String),
      attempts: 0,
    });
    expect(await rowOf(message_ids[1])).toMatchObject({ status: 'queued', errorCode: null });
    expect(await jobsFor(message_ids)).toEqual([{ name: 'email.send', message_id: message_ids[1] }]);
  });

  it('one email.send.bulk chunk job for a request of three emails, nothing in the SMS queues, all under one request', async () => {
    const t = await tenant();
    const cs = await Promise.all([createClient(t.business.id), createClient(t.business.id), createClient(t.business.id)]);
    const res = await t.send({
      sender_type: 'system',
      category: 'transactional',
      messages: cs.map((c, i) => ({ subject: `Receipt ${i}`, message: 'Thanks', client_id: c.id })),
    });
    expect(res.status).toBe(200);
    const { message_ids, request_id } = await jsonOf(res);
    expect(message_ids).toHaveLength(3);
    const rows = await db.select().from(messages).where(inArray(messages.id, message_ids)).orderBy(messages.id);
    expect(rows.map((r) => r.id)).toEqual(message_ids);
    expect(rows.map((r) => r.subject)).toEqual(['Receipt 0', 'Receipt 1', 'Receipt 2']);
    expect(
      rows.every(
        (r) => r.requestId === request_id && r.status === 'queued' && r.category === 'transactional' && r.senderType === 'system',
      ),
    ).toBe(true);
    const jobs = await sendJobsFor(message_ids);
    expect(jobs.map((j) => ({ name: j.name, message_id: j.message_id }))).toEqual(
      message_ids.map((id: number) => ({ name: 'email.send.bulk', message_id: id })),
    );
    expect(new Set(jobs.map((j) => j.id)).size).toBe(1);
  });

  it('an email to a client of another business by id is a 422; the other business is untouched', async () => {
    const t = await tenant();
    const other = await createTenant();
    const theirs = await createClient(other.business.id);
    const res = await t.send({ sender_type: 'staff', messages: [{ subject: 's', message: 'm', client_id: theirs.id }] });
    expect(res.status).toBe(422);
    expect(await locsOf(res)).toEqual([['body', 'messages', 0, 'client_id']]);
    expect(
      await db
        .select()
        .from(messages)
        .where(and(eq(messages.clientId, theirs.id))),
    ).toHaveLength(0);
  });
});
