import { eq, inArray, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db } from '@/server/db/client';
import { clients, messages } from '@/db/schema';
import { createClient, createLocation, createSmsNumber, createStaff, createTenant } from '@/server/testing/factories';
import { deleteJson, getJson, locs, patchJson, postJson, restTenant } from '@/server/testing/http';
import { resolveForRecipients } from './saved-replies';

/** docs/api.md#saved-replies: CRUD over REST, its rules, tenancy, and resolution per recipient. */

const reply = (over: Record<string, unknown> = {}) => ({ title: 'Running late', body: 'Hi {{client.first_name}}!', ...over });

describe('saved replies over REST', () => {
  it('creates, reads, lists, updates and deletes', async () => {
    const t = await restTenant();
    const created = await postJson(`${t.base}/saved-replies`, t.key, reply());
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({
      business_id: t.business.id,
      title: 'Running late',
      body: 'Hi {{client.first_name}}!',
      channel: null,
      subject: null,
      variables: ['client.first_name'],
    });
    const id = created.body.saved_reply_id as number;
    const email = await postJson(`${t.base}/saved-replies`, t.session, {
      title: 'after care',
      body: 'Dear {{client.name}}, thank you. {{staff.first_name}} at {{business.name}}',
      channel: 'email',
      subject: 'Your visit to {{location.name}}',
    });
    expect(email.status).toBe(200);
    expect(email.body.variables).toEqual(['location.name', 'client.name', 'staff.first_name', 'business.name']);

    expect((await getJson(`${t.base}/saved-replies/${id}`, t.key)).body.title).toBe('Running late');
    const all = await getJson(`${t.base}/saved-replies`, t.key);
    expect(all.body.saved_replies.map((r: { title: string }) => r.title)).toEqual(['after care', 'Running late']);
    expect(all.body).toMatchObject({ total_saved_replies: 2, next_page: false });
    const sms = await getJson(`${t.base}/saved-replies?channel=sms`, t.key);
    expect(sms.body.saved_replies.map((r: { title: string }) => r.title)).toEqual(['Running late']);
    const found = await getJson(`${t.base}/saved-replies?search=thank`, t.key);
    expect(found.body.saved_replies.map((r: { title: string }) => r.title)).toEqual(['after care']);

    const updated = await patchJson(`${t.base}/saved-replies/${id}`, t.key, {
      body: 'Running 10 minutes late, {{client.first_name}}',
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ title: 'Running late', body: 'Running 10 minutes late, {{client.first_name}}' });
    // Leaving email drops the subject.
    const anyChannel = await patchJson(`${t.base}/saved-replies/${email.body.saved_reply_id}`, t.key, { channel: null });
    expect(anyChannel.body).toMatchObject({ channel: null, subject: null });

    expect((await deleteJson(`${t.base}/saved-replies/${id}`, t.key)).body).toEqual({ success: true, saved_reply_id: id });
    expect((await getJson(`${t.base}/saved-replies/${id}`, t.key)).status).toBe(404);
    expect((await deleteJson(`${t.base}/saved-replies/${id}`, t.key)).status).toBe(404);
  });

  it("answers 404 for another business's reply, and 403 for another business's path", async () => {
    const mine = await restTenant();
    const other = await restTenant();
    const theirs = await postJson(`${other.base}/saved-replies`, other.key, reply());
    const path = `${mine.base}/saved-replies/${theirs.body.saved_reply_id}`;
    expect((await getJson(path, mine.key)).status).toBe(404);
    expect((await patchJson(path, mine.key, { title: 'Mine now' })).status).toBe(404);
    expect((await deleteJson(path, mine.key)).status).toBe(404);
    expect((await getJson(`${other.base}/saved-replies`, mine.key)).status).toBe(403);
    expect((await getJson(`${mine.base}/saved-replies`, mine.key)).body.total_saved_replies).toBe(0);
    expect((await getJson(`${mine.base}/saved-replies/2147483648`, mine.key)).status).toBe(404);
  });

  it.each([
    ['an unknown variable', reply({ body: 'Hi {{client.nickname}} {{ Client.name }}' }), [['body', 'body']]],
    ['an unknown variable in the subject', reply({ channel: 'email', subject: 'For {{you}}' }), [['body', 'subject']]],
    ['an SMS body over 1,600 characters', reply({ body: 'x'.repeat(1601) }), [['body', 'body']]],
    ['a body over 20,000 characters', reply({ channel: 'email', body: 'x'.repeat(20_001) }), [['body', 'body']]],
    ['a subject on an SMS reply', reply({ channel: 'sms', subject: 'Hello' }), [['body', 'subject']]],
    ['a title over 100 characters', reply({ title: 't'.repeat(101) }), [['body', 'title']]],
    ['an empty title', reply({ title: '   ' }), [['body', 'title']]],
    ['an unknown channel', reply({ channel: 'voice' }), [['body', 'channel']]],
    ['no body', { title: 'x' }, [['body', 'body']]],
  ])('refuses %s with a 422 naming the field', async (_, request, expected) => {
    const t = await restTenant();
    const res = await postJson(`${t.base}/saved-replies`, t.key, request);
    expect(res.status).toBe(422);
    expect(locs(res.body)).toEqual(expected);
  });

  it('allows a long body on email replies, and refuses a duplicate title (any case) or a change that breaks a rule', async () => {
    const t = await restTenant();
    const long = await postJson(`${t.base}/saved-replies`, t.key, reply({ channel: 'email', body: 'x'.repeat(5000) }));
    expect(long.status).toBe(200);
    const dup = await postJson(`${t.base}/saved-replies`, t.key, reply({ title: 'RUNNING LATE' }));
    expect(dup.status).toBe(422);
    expect(locs(dup.body)).toEqual([['body', 'title']]);
    const other = await postJson(`${t.base}/saved-replies`, t.key, reply({ title: 'Other' }));
    const rename = await patchJson(`${t.base}/saved-replies/${other.body.saved_reply_id}`, t.key, { title: 'running late' });
    expect(locs(rename.body)).toEqual([['body', 'title']]);
    // Turning the long email reply into an SMS one would leave it over the SMS length.
    const toSms = await patchJson(`${t.base}/saved-replies/${long.body.saved_reply_id}`, t.key, { channel: 'sms' });
    expect(toSms.status).toBe(422);
    expect(locs(toSms.body)).toEqual([['body', 'body']]);
    const typo = await patchJson(`${t.base}/saved-replies/${other.body.saved_reply_id}`, t.key, { body: '{{clinet.name}}' });
    expect(locs(typo.body)).toEqual([['body', 'body']]);
  });
});

describe('resolveForRecipients', () => {
  it("fills each client's values, the location (the client's, else the business's only one) and the sender; leaves what is missing visible", async () => {
    const t = await createTenant();
    const b = t.business.id;
    const downtown = await createLocation(b, { name: 'Downtown', phoneNumber: '+14155550100' });
    const ana = await createClient(b, { name: 'Ana Lima', locationId: downtown.id });
    const bo = await createClient(b, { name: 'Bo', locationId: null });
    const nameless = await createClient(b, { name: null, locationId: downtown.id });
    const sam = await createStaff(b, { name: 'Sam Rivera' });
    const r = await postJson(
      `/api/v1/businesses/${b}/saved-replies`,
      { 'x-api-key': t.apiKey },
      {
        title: 'Late',
        body: 'Hi {{client.first_name}}, {{staff.first_name}} from {{business.name}} ({{location.name}}, {{location.phone}})',
      },
    );
    const resolved = await resolveForRecipients(
      b,
      r.body.saved_reply_id,
      [{ clientId: ana.id }, { clientId: bo.id }, { clientId: nameless.id }, { clientId: null }],
      sam.id,
    );
    const business = t.business.name;
    expect(resolved.map((x) => x.body)).toEqual([
      { text: `Hi Ana, Sam from ${business} (Downtown, (415) 555-0100)`, missing: [], unknown: [] },
      // The business has one location, so a client without their own gets it.
      { text: `Hi Bo, Sam from ${business} (Downtown, (415) 555-0100)`, missing: [], unknown: [] },
      {
        text: `Hi {{client.first_name}}, Sam from ${business} (Downtown, (415) 555-0100)`,
        missing: ['client.first_name'],
        unknown: [],
      },
      {
        text: `Hi {{client.first_name}}, Sam from ${business} (Downtown, (415) 555-0100)`,
        missing: ['client.first_name'],
        unknown: [],
      },
    ]);

    // A second location: a client without one has no location any more; without a sender, no staff name.
    await createLocation(b, { name: 'Uptown' });
    const [again] = await resolveForRecipients(b, r.body.saved_reply_id, [{ clientId: bo.id }]);
    expect(again!.body).toEqual({
      text: `Hi Bo, {{staff.first_name}} from ${business} ({{location.name}}, {{location.phone}})`,
      missing: ['staff.first_name', 'location.name', 'location.phone'],
      unknown: [],
    });
    const t2 = await createTenant();
    await expect(resolveForRecipients(t2.business.id, r.body.saved_reply_id, [{ clientId: null }])).rejects.toThrow(
      'Saved reply not found',
    );
  });
});

describe('sending by saved_reply_id (docs/api.md#saved-replies)', () => {
  async function sendingTenant() {
    const t = await restTenant();
    await createSmsNumber(t.business.id);
    const location = await createLocation(t.business.id, { name: 'Downtown' });
    const clientsNamed = await Promise.all(
      ['Ana Lima', 'Bo Chen', 'Cy Diaz'].map((name) => createClient(t.business.id, { name, locationId: location.id })),
    );
    const create = async (r: Record<string, unknown>) =>
      (await postJson(`${t.base}/saved-replies`, t.key, r)).body.saved_reply_id as number;
    return { ...t, clients: clientsNamed, create };
  }
  const storedFor = (ids: number[]) =>
    db
      .select({ id: messages.id, content: messages.content, subject: messages.subject, segments: messages.segments })
      .from(messages)
      .where(inArray(messages.id, ids))
      .orderBy(messages.id);
  const countFor = async (businessId: number) =>
    (
      await db
        .select({ n: sql<number>`count(*)::int` })
        .from(messages)
        .where(eq(messages.businessId, businessId))
    )[0]!.n;

  it('resolves the reply per recipient in one bulk SMS request, next to items with their own message', async () => {
    const t = await sendingTenant();
    const id = await t.create({ title: 'Ready', body: 'Hi {{client.first_name}}, your order is ready at {{location.name}}.' });
    const res = await postJson(`${t.base}/sms`, t.key, {
      sender_type: 'system',
      messages: [
        ...t.clients.map((c) => ({ client_id: c.id, saved_reply_id: id })),
        { client_id: t.clients[0]!.id, message: 'A plain one' },
      ],
    });
    expect(res.status).toBe(200);
    const stored = await storedFor(res.body.message_ids);
    expect(stored.map((m) => m.content)).toEqual([
      'Hi Ana, your order is ready at Downtown.',
      'Hi Bo, your order is ready at Downtown.',
      'Hi Cy, your order is ready at Downtown.',
      'A plain one',
    ]);
    expect(stored.map((m) => m.segments)).toEqual([1, 1, 1, 1]);
    // The any-channel operation takes the same items.
    const viaMessages = await postJson(`/api/v1/messages/${t.business.id}`, t.key, {
      channel: 'sms',
      mode: 'send',
      sender_type: 'system',
      messages: [{ client_id: t.clients[1]!.id, saved_reply_id: id }],
    });
    expect(viaMessages.status).toBe(200);
    expect((await storedFor(viaMessages.body.message_ids))[0]!.content).toBe('Hi Bo, your order is ready at Downtown.');
  });

  it('sends an email reply with its resolved subject, or the subject the item gives', async () => {
    const t = await sendingTenant();
    const id = await t.create({
      title: 'Thanks',
      channel: 'email',
      subject: 'Thanks, {{client.first_name}}',
      body: 'See you at {{location.name}}',
    });
    const anyChannel = await t.create({ title: 'Any', body: 'Hello {{client.name}}' });
    const res = await postJson(`${t.base}/email`, t.key, {
      sender_type: 'system',
      messages: [
        { client_id: t.clients[0]!.id, saved_reply_id: id },
        { client_id: t.clients[1]!.id, saved_reply_id: id, subject: 'Our own subject' },
        { client_id: t.clients[2]!.id, saved_reply_id: anyChannel, subject: 'Hi' },
      ],
    });
    expect(res.status).toBe(200);
    expect((await storedFor(res.body.message_ids)).map((m) => [m.subject, m.content])).toEqual([
      ['Thanks, Ana', 'See you at Downtown'],
      ['Our own subject', 'See you at Downtown'],
      ['Hi', 'Hello Cy Diaz'],
    ]);
  });

  it('a recipient with a missing value is a 422 listing those items by index, and nothing is stored', async () => {
    const t = await sendingTenant();
    const nameless = await createClient(t.business.id, { name: null });
    const id = await t.create({ title: 'Hi', body: 'Hi {{client.first_name}}' });
    const res = await postJson(`${t.base}/sms`, t.key, {
      sender_type: 'system',
      messages: [
        { client_id: t.clients[0]!.id, saved_reply_id: id },
        { client_id: nameless.id, saved_reply_id: id },
        { to_number: '+14155550177', saved_reply_id: id }, // a new lead has no name either
      ],
    });
    expect(res.status).toBe(422);
    expect(locs(res.body)).toEqual([
      ['body', 'messages', 1, 'saved_reply_id'],
      ['body', 'messages', 2, 'saved_reply_id'],
    ]);
    expect(res.body.detail[0].msg).toBe('Saved reply "Hi" has no value for {{client.first_name}} for this recipient');
    expect(await countFor(t.business.id)).toBe(0);
    // No lead was created for the refused item either.
    expect((await getJson(`${t.base}/clients?search=5550177`, t.key)).body.total_clients ?? 0).toBe(0);
  });

  it.each([
    [
      'both message and saved_reply_id',
      (id: number) => ({ message: 'x', saved_reply_id: id }),
      [['body', 'messages', 0, 'message']],
    ],
    ['neither', () => ({}), [['body', 'messages', 0, 'message']]],
    ['a reply of another business', () => ({ saved_reply_id: 2147483647 }), [['body', 'messages', 0, 'saved_reply_id']]],
    [
      'an email-only reply on SMS',
      (_: number, email: number) => ({ saved_reply_id: email }),
      [['body', 'messages', 0, 'saved_reply_id']],
    ],
    [
      'a reply that resolves past 1,600 characters',
      (_: number, __: number, long: number) => ({ saved_reply_id: long }),
      [['body', 'messages', 0, 'saved_reply_id']],
    ],
  ])('an SMS item with %s is a 422', async (_, item, expected) => {
    const t = await sendingTenant();
    await updateClientName(t.clients[0]!.id, 'A'.repeat(200));
    const id = await t.create({ title: 'Plain', body: 'Hello' });
    const email = await t.create({ title: 'Email', channel: 'email', body: 'Hello' });
    const long = await t.create({ title: 'Long', body: `${'x'.repeat(1580)} {{client.name}}` });
    const res = await postJson(`${t.base}/sms`, t.key, {
      sender_type: 'system',
      messages: [{ client_id: t.clients[0]!.id, ...item(id, email, long) }],
    });
    expect(res.status).toBe(422);
    expect(locs(res.body)).toEqual(expected);
    expect(await countFor(t.business.id)).toBe(0);
  });

  it('an email item from a reply without a subject needs one; html goes only with message', async () => {
    const t = await sendingTenant();
    const id = await t.create({ title: 'Any', body: 'Hello {{client.first_name}}' });
    const res = await postJson(`${t.base}/email`, t.key, {
      sender_type: 'system',
      messages: [
        { client_id: t.clients[0]!.id, saved_reply_id: id },
        { client_id: t.clients[1]!.id, saved_reply_id: id, subject: 'ok', html: '<p>x</p>' },
      ],
    });
    expect(res.status).toBe(422);
    expect(locs(res.body)).toEqual([['body', 'messages', 1, 'html']]);
    const noSubject = await postJson(`${t.base}/email`, t.key, {
      sender_type: 'system',
      messages: [{ client_id: t.clients[0]!.id, saved_reply_id: id }],
    });
    expect(locs(noSubject.body)).toEqual([['body', 'messages', 0, 'subject']]);
    expect(await countFor(t.business.id)).toBe(0);
  });

  it('staff.first_name comes from the staff_id of the request', async () => {
    const t = await sendingTenant();
    const sam = await createStaff(t.business.id, { name: 'Sam Rivera' });
    const id = await t.create({ title: 'Sign', body: '{{staff.first_name}} here' });
    const without = await postJson(`${t.base}/sms`, t.key, {
      sender_type: 'staff',
      messages: [{ client_id: t.clients[0]!.id, saved_reply_id: id }],
    });
    expect(locs(without.body)).toEqual([['body', 'messages', 0, 'saved_reply_id']]);
    const withStaff = await postJson(`${t.base}/sms`, t.key, {
      sender_type: 'staff',
      staff_id: sam.id,
      messages: [{ client_id: t.clients[0]!.id, saved_reply_id: id }],
    });
    expect(withStaff.status).toBe(200);
    expect((await storedFor(withStaff.body.message_ids))[0]!.content).toBe('Sam here');
  });
});

const updateClientName = (id: number, name: string) => db.update(clients).set({ name }).where(eq(clients.id, id));
