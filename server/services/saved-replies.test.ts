import { describe, expect, it } from 'vitest';
import { createClient, createLocation, createStaff, createTenant } from '@/server/testing/factories';
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
