import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db } from '@/server/db/client';
import { consents, messages, optOuts } from '@/db/schema';
import { createClient, createSmsNumber, PLATFORM_KEY } from '@/server/testing/factories';
import { api, getJson, jsonOf, locs, postJson, restTenant, type RestTenant } from '@/server/testing/http';
import { jobsWhere } from '@/server/testing/webhooks';

/**
 * Consent records (docs/api.md#consent): appended over REST, by staff in the inbox and by the
 * onboarding import; the latest per channel and purpose is current; campaign, marketing and
 * review-request messages are refused without marketing consent, transactional ones are not.
 */
let counter = 0;
const newPhone = () => `+1646${String(Date.now() % 1e4).padStart(4, '0')}${String(++counter).padStart(3, '0')}`;

const consentsPath = (t: RestTenant, clientId: number) => `${t.base}/clients/${clientId}/consents`;
const hoursAgo = (h: number) => new Date(Date.now() - h * 3_600_000).toISOString();

async function sendSms(t: RestTenant, clientId: number, envelope: Record<string, unknown>) {
  const res = await postJson(`${t.base}/sms`, t.key, {
    sender_type: 'staff',
    messages: [{ client_id: clientId, message: `Hello ${randomUUID()}` }],
    ...envelope,
  });
  expect(res.status).toBe(200);
  const [id] = res.body.message_ids as number[];
  return (await db.select().from(messages).where(eq(messages.id, id!)))[0]!;
}

describe('consent records over REST', () => {
  it('appends records; the latest by recorded_at is current per channel and purpose, and the history keeps every one', async () => {
    const t = await restTenant();
    const client = await createClient(t.business.id, { phoneNumber: newPhone() });
    const post = (body: Record<string, unknown>, headers = t.key) => postJson(consentsPath(t, client.id), headers, body);

    const given = await post({
      channel: 'sms',
      purpose: 'marketing',
      status: 'given',
      source: 'web_form',
      note: '  I agree to receive offers by text  ',
      recorded_at: hoursAgo(48),
    });
    expect(given.status).toBe(200);
    expect(given.body).toMatchObject({
      client_id: client.id,
      status: 'given',
      source: 'web_form',
      note: 'I agree to receive offers by text',
    });
    // A withdrawal recorded over a staff session names the staff member; the source defaults to `api`.
    const withdrawn = await post(
      { channel: 'sms', purpose: 'marketing', status: 'withdrawn', recorded_at: hoursAgo(1) },
      t.session,
    );
    expect(withdrawn.body).toMatchObject({ source: 'api', recorded_by_staff_id: t.owner.id });
    // An older record, imported late, does not override the newer withdrawal.
    await post({ channel: 'sms', purpose: 'marketing', status: 'given', source: 'paper_form', recorded_at: hoursAgo(24) });
    await post({ channel: 'email', purpose: 'transactional', status: 'given', source: 'in_person' });

    const read = await getJson(consentsPath(t, client.id), t.key);
    expect(read.status).toBe(200);
    const current = read.body.current as { channel: string; purpose: string; status: string; source: string }[];
    expect(current.map((c) => [c.channel, c.purpose, c.status, c.source]).sort()).toEqual([
      ['email', 'transactional', 'given', 'in_person'],
      ['sms', 'marketing', 'withdrawn', 'api'],
    ]);
    // Newest first by the time the client gave or withdrew it.
    expect((read.body.history as { source: string }[]).map((h) => h.source)).toEqual([
      'in_person',
      'api',
      'paper_form',
      'web_form',
    ]);
  });

  it('refuses bad input with the field location, and a client of another business with 404', async () => {
    const t = await restTenant();
    const other = await restTenant();
    const client = await createClient(t.business.id);
    const bad = await postJson(consentsPath(t, client.id), t.key, {
      channel: 'voice',
      purpose: 'sales',
      status: 'maybe',
      source: 'rumour',
      note: 'x'.repeat(2001),
      recorded_at: '2026-02-30T10:00:00Z',
    });
    expect(bad.status).toBe(422);
    expect(locs(bad.body).sort()).toEqual(
      [
        ['body', 'channel'],
        ['body', 'note'],
        ['body', 'purpose'],
        ['body', 'recorded_at'],
        ['body', 'source'],
        ['body', 'status'],
      ].sort(),
    );
    const future = await postJson(consentsPath(t, client.id), t.key, {
      channel: 'sms',
      purpose: 'marketing',
      status: 'given',
      recorded_at: new Date(Date.now() + 86_400_000).toISOString(),
    });
    expect(future.status).toBe(422);
    expect(future.body.detail[0]).toMatchObject({ loc: ['body', 'recorded_at'] });
    expect(future.body.detail[0].msg).toMatch(/^must not be later than now/);

    const body = { channel: 'sms', purpose: 'marketing', status: 'given' };
    expect((await postJson(consentsPath(other, client.id), other.key, body)).status).toBe(404);
    expect((await getJson(consentsPath(other, client.id), other.key)).status).toBe(404);
    expect((await postJson(consentsPath(t, client.id), other.key, body)).status).toBe(403);
    expect(await db.select().from(consents).where(eq(consents.clientId, client.id))).toHaveLength(0);
  });
});

describe('recorded_at is never later than now (docs/api.md#consent)', () => {
  const inSeconds = (s: number) => new Date(Date.now() + s * 1000).toISOString();

  it('the attack: a `given` dated minutes ahead no longer outranks the withdrawals made meanwhile', async () => {
    const t = await restTenant();
    await createSmsNumber(t.business.id);
    const client = await createClient(t.business.id, { phoneNumber: newPhone() });
    const post = (body: Record<string, unknown>) =>
      postJson(consentsPath(t, client.id), t.key, { channel: 'sms', purpose: 'marketing', ...body });

    // Dated 4 minutes ahead (accepted before, as "clock skew"): refused, nothing stored.
    for (const seconds of [240, 6]) {
      const ahead = await post({ status: 'given', source: 'web_form', recorded_at: inSeconds(seconds) });
      expect(ahead.status, String(seconds)).toBe(422);
      expect(locs(ahead.body)).toEqual([['body', 'recorded_at']]);
    }
    expect(await db.select().from(consents).where(eq(consents.clientId, client.id))).toEqual([]);

    // A few seconds of skew are accepted and stored as now: the client's withdrawal a moment later wins.
    const skewed = await post({ status: 'given', source: 'web_form', recorded_at: inSeconds(4) });
    expect(skewed.status).toBe(200);
    expect(Date.parse(skewed.body.recorded_at)).toBeLessThanOrEqual(Date.parse(skewed.body.created_at));
    expect(Date.parse(skewed.body.recorded_at)).toBeLessThanOrEqual(Date.now());
    const withdrawn = await post({ status: 'withdrawn', source: 'keyword' });
    expect(withdrawn.status).toBe(200);
    const read = await getJson(consentsPath(t, client.id), t.key);
    expect(read.body.current).toEqual([expect.objectContaining({ status: 'withdrawn', consent_id: withdrawn.body.consent_id })]);
    const campaign = await sendSms(t, client.id, { category: 'campaign' });
    expect(campaign).toMatchObject({ status: 'failed', errorCode: 'no_marketing_consent' });
  });

  it('the database refuses a record dated after it was made, whoever writes it', async () => {
    const t = await restTenant();
    const client = await createClient(t.business.id);
    await expect(
      db.insert(consents).values({
        businessId: t.business.id,
        clientId: client.id,
        channel: 'sms',
        purpose: 'marketing',
        status: 'given',
        source: 'api',
        recordedAt: new Date(Date.now() + 60_000),
      }),
    ).rejects.toMatchObject({ cause: expect.objectContaining({ constraint_name: 'consents_recorded_at_check' }) });
  });

  it('the onboarding import clamps a few seconds of skew too', async () => {
    const body = {
      external_id: `skew-${randomUUID().slice(0, 8)}`,
      name: 'Skew Studio',
      timezone: 'America/New_York',
      clients: [
        {
          external_id: 'c-1',
          name: 'Sam',
          phone_number: newPhone(),
          consents: [{ channel: 'sms', purpose: 'marketing', status: 'given', recorded_at: inSeconds(3) }],
        },
      ],
    };
    const onboard = () => api.post('/api/v1/business/onboard', { headers: { 'x-api-key': PLATFORM_KEY() }, body });
    const first = await onboard();
    expect(first.status).toBe(200);
    const clientId = (await jsonOf(first)).clients[0].client_id as number;
    const [stored] = await db.select().from(consents).where(eq(consents.clientId, clientId));
    expect(stored!.recordedAt.getTime()).toBeLessThanOrEqual(stored!.createdAt.getTime());
  });
});

describe('marketing needs marketing consent (docs/api.md#consent)', () => {
  it('a campaign, a marketing or a review request to a client without it is failed with the reason and never queued; with it, queued', async () => {
    const t = await restTenant();
    await createSmsNumber(t.business.id);
    const client = await createClient(t.business.id, { phoneNumber: newPhone() });

    for (const envelope of [
      { category: 'campaign' },
      { category: 'transactional', notification_type: 'marketing' },
      { category: 'reminder', notification_type: 'review_request' },
    ]) {
      const refused = await sendSms(t, client.id, envelope);
      expect(refused).toMatchObject({ status: 'failed', errorCode: 'no_marketing_consent' });
      expect(refused.errorMessage).toMatch(/not given marketing consent for texts/);
      expect(await jobsWhere('sms.send', 'messageId', refused.id)).toHaveLength(0);
    }
    // Transactional messages and replies need no marketing consent.
    expect(
      await sendSms(t, client.id, { category: 'transactional', notification_type: 'appointment_confirmation' }),
    ).toMatchObject({
      status: 'queued',
    });
    expect(await sendSms(t, client.id, {})).toMatchObject({ status: 'queued' });

    // Consent for email is not consent for texts; marketing consent for texts is.
    await postJson(consentsPath(t, client.id), t.key, { channel: 'email', purpose: 'marketing', status: 'given' });
    expect(await sendSms(t, client.id, { category: 'campaign' })).toMatchObject({ status: 'failed' });
    await postJson(consentsPath(t, client.id), t.key, { channel: 'sms', purpose: 'marketing', status: 'given' });
    const sent = await sendSms(t, client.id, { category: 'campaign' });
    expect(sent).toMatchObject({ status: 'queued', errorCode: null });
    expect(await jobsWhere('sms.send', 'messageId', sent.id)).toHaveLength(1);
  });

  it('in a bulk campaign each recipient is judged on its own; a new number (a lead) has no consent', async () => {
    const t = await restTenant();
    await createSmsNumber(t.business.id);
    const yes = await createClient(t.business.id, { phoneNumber: newPhone() });
    const no = await createClient(t.business.id, { phoneNumber: newPhone() });
    await postJson(consentsPath(t, yes.id), t.key, { channel: 'sms', purpose: 'marketing', status: 'given' });
    const res = await postJson(`${t.base}/sms`, t.key, {
      sender_type: 'staff',
      category: 'campaign',
      messages: [
        { client_id: no.id, message: 'Offer' },
        { to_number: yes.phoneNumber, message: 'Offer' },
        { to_number: newPhone(), message: 'Offer' },
      ],
    });
    expect(res.status).toBe(200);
    const rows = await db
      .select({ status: messages.status, errorCode: messages.errorCode })
      .from(messages)
      .where(eq(messages.requestId, res.body.request_id))
      .orderBy(messages.id);
    expect(rows).toEqual([
      { status: 'failed', errorCode: 'no_marketing_consent' },
      { status: 'queued', errorCode: null },
      { status: 'failed', errorCode: 'no_marketing_consent' },
    ]);
  });
});

describe('consent in the onboarding import', () => {
  it('imported clients marked opted out are suppressed by number and address (source import); false opts nobody back in', async () => {
    const ext = `optout-${randomUUID().slice(0, 8)}`;
    const phone = newPhone();
    const body = (optedOut: boolean) => ({
      external_id: ext,
      name: 'Import Studio',
      timezone: 'America/New_York',
      clients: [
        {
          external_id: 'c-1',
          name: 'Ola',
          phone_number: phone,
          email: 'Ola@Example.test',
          opted_out_sms: optedOut,
          opted_out_email: optedOut,
        },
        { external_id: 'c-2', name: 'Pia', phone_number: newPhone() },
      ],
    });
    const onboard = (optedOut: boolean) =>
      api.post('/api/v1/business/onboard', { headers: { 'x-api-key': PLATFORM_KEY() }, body: body(optedOut) });
    const first = await onboard(true);
    expect(first.status).toBe(200);
    const { business_id } = await jsonOf(first);
    const stored = () =>
      db
        .select({ channel: optOuts.channel, address: optOuts.address, source: optOuts.source })
        .from(optOuts)
        .where(eq(optOuts.businessId, business_id))
        .orderBy(optOuts.channel);
    expect(await stored()).toEqual([
      { channel: 'email', address: 'ola@example.test', source: 'import' },
      { channel: 'sms', address: phone, source: 'import' },
    ]);
    expect((await onboard(false)).status).toBe(200);
    expect(await stored()).toHaveLength(2);
  });

  it('onboarding imports consent records with the clients; onboarding again with the same records adds none', async () => {
    const ext = `consent-${randomUUID().slice(0, 8)}`;
    const body = {
      external_id: ext,
      name: 'Consent Studio',
      timezone: 'America/New_York',
      clients: [
        {
          external_id: 'c-1',
          name: 'Ivy',
          phone_number: '212 555 0101',
          consents: [
            {
              channel: 'sms',
              purpose: 'marketing',
              status: 'given',
              source: 'paper_form',
              recorded_at: '2026-03-01T09:30:00-05:00',
              note: 'Front desk card',
            },
            { channel: 'sms', purpose: 'transactional', status: 'given' },
          ],
        },
      ],
    };
    const onboard = () => api.post('/api/v1/business/onboard', { headers: { 'x-api-key': PLATFORM_KEY() }, body });
    const first = await onboard();
    expect(first.status).toBe(200);
    const { business_id, clients } = await jsonOf(first);
    const clientId = clients[0].client_id as number;
    const stored = () => db.select().from(consents).where(eq(consents.clientId, clientId)).orderBy(consents.purpose);
    expect(await stored()).toEqual([
      expect.objectContaining({
        businessId: business_id,
        purpose: 'marketing',
        source: 'paper_form',
        note: 'Front desk card',
        recordedAt: new Date('2026-03-01T14:30:00Z'),
      }),
      expect.objectContaining({ purpose: 'transactional', source: 'import' }),
    ]);
    // The dated record is not added twice; the undated one is dated by each request, so it is.
    expect((await onboard()).status).toBe(200);
    expect((await stored()).filter((c) => c.purpose === 'marketing')).toHaveLength(1);

    const bad = await api.post('/api/v1/business/onboard', {
      headers: { 'x-api-key': PLATFORM_KEY() },
      body: {
        ...body,
        clients: [
          {
            ...body.clients[0],
            consents: [{ channel: 'sms', purpose: 'marketing', status: 'given', recorded_at: '2026-13-01T00:00:00Z' }],
          },
        ],
      },
    });
    expect(bad.status).toBe(422);
    expect(locs(await jsonOf(bad))).toEqual([['body', 'clients', 0, 'consents', 0, 'recorded_at']]);
  });
});
