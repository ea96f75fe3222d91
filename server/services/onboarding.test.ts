import { randomUUID } from 'node:crypto';
import { and, count, eq, sql } from 'drizzle-orm';
import PgBoss from 'pg-boss';
import { beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { db } from '@/server/db/client';
import { apiKeys, businessEmailSenders, businessSmsNumbers, businesses, clients, locations, staff } from '@/db/schema';
import type { ClientsImportJob } from '@/server/jobs/queues';
import { logger } from '@/server/logger';
import type { BusinessOnboardResponse, OnboardingStatusResponse } from '@/server/schemas/onboarding';
import { createBusiness, createSmsNumber, createTenant, PLATFORM_KEY } from '@/server/testing/factories';
import { api, jsonOf } from '@/server/testing/http';
import { importClientsBatch } from '@/server/services/onboarding-import';
import { CLIENTS_IMPORT_QUEUE, importClientsChunk } from './onboarding';

const platform = () => ({ 'x-api-key': PLATFORM_KEY() });
const uid = () => randomUUID().slice(0, 8);

type Onboarded = z.output<typeof BusinessOnboardResponse>;
type Progress = z.output<typeof OnboardingStatusResponse>;
/** A US number nobody else in this database uses, typed the way a person would. */
let phoneCounter = 0;
const typedPhone = () => {
  const n = String(Math.floor(Math.random() * 9000) * 1000 + ++phoneCounter).padStart(7, '0');
  return `(628) ${n.slice(0, 3)}-${n.slice(3)}`;
};
const e164 = (typed: string) => `+1${typed.replace(/\D/g, '')}`;

const onboard = (body: unknown, headers: Record<string, string> = platform()) =>
  api.post('/api/v1/business/onboard', { headers, body });
const status = (businessId: number, headers: Record<string, string> = platform()) =>
  api.get(`/api/v1/business/${businessId}/onboarding-status`, { headers });

function generatedClients(n: number, prefix: string, extra: Record<string, unknown> = {}) {
  return Array.from({ length: n }, (_, i) => ({
    external_id: `${prefix}-${i}`,
    name: `Client ${i}`,
    email: `client${i}@${prefix}.test`,
    phone_number: `212 555 ${String(i % 10_000).padStart(4, '0')}`,
    ...extra,
  }));
}

function fullBody(ext: string, sms = [typedPhone(), typedPhone()]) {
  return {
    external_id: ext,
    name: 'Glow Studio',
    timezone: 'America/Chicago',
    sms_numbers: sms,
    from_email: `Hello@${ext}.test`,
    from_name: 'Glow Studio',
    settings: { record_calls: true, missed_call_text: 'Sorry we missed you!' },
    locations: [
      { external_id: 'loc-1', name: 'Downtown', address: '1 Main St', phone_number: '312-555-0100', timezone: 'America/Chicago' },
      { external_id: 'loc-2', name: 'Uptown' },
    ],
    staff: [
      { external_id: 'st-1', name: 'Ada Owner', email: 'ada@glow.test', role: 'owner', location_external_id: 'loc-1' },
      { external_id: 'st-2', name: 'Bo Stylist', phone_number: '(312) 555-0101' },
    ],
    clients: [
      {
        external_id: 'cl-1',
        name: 'Cy Client',
        phone_number: '312.555.0102',
        email: 'CY@example.test',
        location_external_id: 'loc-2',
      },
      { external_id: 'cl-2', name: 'Di Client', client_type: 'vip' },
      { external_id: 'cl-3', name: 'Ed Client', phone_number: '+44 20 7946 0958' },
    ],
  };
}

async function countsFor(businessId: number) {
  const one = async (
    table:
      typeof locations | typeof staff | typeof clients | typeof businessSmsNumbers | typeof businessEmailSenders | typeof apiKeys,
  ) => (await db.select({ n: count() }).from(table).where(eq(table.businessId, businessId)))[0]!.n;
  return {
    locations: await one(locations),
    staff: await one(staff),
    clients: await one(clients),
    sms: await one(businessSmsNumbers),
    senders: await one(businessEmailSenders),
    keys: await one(apiKeys),
  };
}

type JobRow = { id: string; data: ClientsImportJob; retry_count: number; retry_limit: number };

/** The import jobs enqueued for a business, shaped as the batch loop hands them to the handler. */
async function importJobs(businessId: number): Promise<PgBoss.JobWithMetadata<ClientsImportJob>[]> {
  const rows = await db.execute<JobRow>(sql`
    select id, data, retry_count, retry_limit from pgboss.job
    where name = ${CLIENTS_IMPORT_QUEUE} and (data->>'businessId')::int = ${businessId}
    order by (data->>'chunk')::int`);
  return rows.map(
    (r) =>
      ({ id: r.id, name: CLIENTS_IMPORT_QUEUE, data: r.data, retryCount: r.retry_count, retryLimit: r.retry_limit }) as never,
  );
}

beforeAll(async () => {
  // The queue is created with the others once server/jobs/queues.ts lists it; until then, here.
  const boss = new PgBoss({ connectionString: process.env.DATABASE_URL!, supervise: false, schedule: false, max: 1 });
  boss.on('error', () => {});
  await boss.start();
  if (!(await boss.getQueue(CLIENTS_IMPORT_QUEUE))) {
    await boss.createQueue(CLIENTS_IMPORT_QUEUE, {
      name: CLIENTS_IMPORT_QUEUE,
      retryLimit: 5,
      retryDelay: 5,
      retryBackoff: true,
      expireInSeconds: 300,
    });
  }
  await boss.stop({ graceful: false, wait: true });
});

describe('POST /business/onboard', () => {
  it('creates the business, its senders, locations, staff and clients, and returns the id mapping and a business key once', async () => {
    const ext = `biz-${uid()}`;
    const body = fullBody(ext);
    const res = await onboard(body);
    expect(res.status).toBe(200);
    const out = await jsonOf(res);
    expect(out).toMatchObject({ external_id: ext, onboarding_status: 'completed', api_key: expect.stringMatching(/^bk_/) });
    expect(out.locations.map((l: Onboarded['locations'][number]) => l.external_id)).toEqual(['loc-1', 'loc-2']);
    expect(out.staff.map((s: Onboarded['staff'][number]) => s.external_id)).toEqual(['st-1', 'st-2']);
    expect(out.clients.map((c: Onboarded['clients'][number]) => c.external_id)).toEqual(['cl-1', 'cl-2', 'cl-3']);
    const id = out.business_id as number;

    const [business] = await db.select().from(businesses).where(eq(businesses.id, id));
    expect(business).toMatchObject({
      externalId: ext,
      name: 'Glow Studio',
      timezone: 'America/Chicago',
      country: 'US',
      fromEmail: `hello@${ext}.test`,
      fromName: 'Glow Studio',
      settings: { record_calls: true, missed_call_text: 'Sorry we missed you!' },
      onboardingStatus: 'completed',
    });
    const numbers = await db.select().from(businessSmsNumbers).where(eq(businessSmsNumbers.businessId, id));
    expect(numbers.map((n) => [n.phoneNumber, n.isDefault]).sort()).toEqual(
      [
        [e164(body.sms_numbers[0]!), true],
        [e164(body.sms_numbers[1]!), false],
      ].sort(),
    );
    const senders = await db.select().from(businessEmailSenders).where(eq(businessEmailSenders.businessId, id));
    expect(senders).toMatchObject([{ email: `hello@${ext}.test`, name: 'Glow Studio', isDefault: true }]);

    const locById = new Map(out.locations.map((l: Onboarded['locations'][number]) => [l.external_id, l.location_id]));
    const [loc1] = await db
      .select()
      .from(locations)
      .where(eq(locations.id, locById.get('loc-1') as number));
    expect(loc1).toMatchObject({
      businessId: id,
      name: 'Downtown',
      address: '1 Main St',
      phoneNumber: '+13125550100',
      timezone: 'America/Chicago',
    });
    const people = await db.select().from(staff).where(eq(staff.businessId, id)).orderBy(staff.externalId);
    expect(people).toMatchObject([
      { externalId: 'st-1', role: 'owner', active: true, email: 'ada@glow.test', locationId: locById.get('loc-1') },
      { externalId: 'st-2', role: 'staff', active: true, phoneNumber: '+13125550101', locationId: null },
    ]);
    const customers = await db.select().from(clients).where(eq(clients.businessId, id)).orderBy(clients.externalId);
    expect(customers).toMatchObject([
      {
        externalId: 'cl-1',
        phoneNumber: '+13125550102',
        email: 'cy@example.test',
        clientType: 'new',
        locationId: locById.get('loc-2'),
      },
      { externalId: 'cl-2', phoneNumber: null, clientType: 'vip', locationId: null },
      { externalId: 'cl-3', phoneNumber: '+442079460958' },
    ]);
    expect(out.clients).toEqual(customers.map((c) => ({ external_id: c.externalId, client_id: c.id })));

    // The returned key works, for this business only.
    const st = await status(id, { 'x-api-key': out.api_key });
    expect(st.status).toBe(200);
    const steps = await jsonOf<Progress>(st);
    expect(steps.business_id).toBe(id);
    expect(steps.status).toBe('completed');
    expect(steps.steps.map((s) => [s.name, s.status])).toEqual([
      ['business', 'completed'],
      ['senders', 'completed'],
      ['locations', 'completed'],
      ['staff', 'completed'],
      ['clients', 'completed'],
    ]);
    expect(steps.steps[4]).toMatchObject({ done: 3, total: 3 });
    expect(steps.steps[4]).not.toHaveProperty('import_id');
  });

  it('is idempotent: the same body again returns the same ids, creates and changes nothing, and no key', async () => {
    const ext = `biz-${uid()}`;
    const body = fullBody(ext);
    const first = await jsonOf(await onboard(body));
    const before = await countsFor(first.business_id);
    const [clientBefore] = await db
      .select()
      .from(clients)
      .where(and(eq(clients.businessId, first.business_id), eq(clients.externalId, 'cl-1')));

    const res = await onboard(body);
    expect(res.status).toBe(200);
    const second = await jsonOf(res);
    expect(second).toEqual({ ...first, api_key: null });
    expect(await countsFor(first.business_id)).toEqual(before);
    expect(before).toEqual({ locations: 2, staff: 2, clients: 3, sms: 2, senders: 1, keys: 1 });
    const [clientAfter] = await db.select().from(clients).where(eq(clients.id, clientBefore!.id));
    expect(clientAfter!.updatedAt).toEqual(clientBefore!.updatedAt); // not rewritten
    const st = await jsonOf(await status(first.business_id));
    expect(st.steps[0].detail).toBe('Business unchanged');
    expect(st.steps[4].detail).toContain('0 created, 0 updated, 3 unchanged');

    // Same external_id, changed fields: that business is updated; omitted fields keep their values; null clears.
    const changed = await jsonOf(
      await onboard({
        external_id: ext,
        name: 'Glow Studio & Spa',
        timezone: 'america/new_york',
        clients: [{ external_id: 'cl-1', name: 'Cy Renamed', email: null }],
        staff: [{ external_id: 'st-1', name: 'Ada Owner', active: false }],
      }),
    );
    expect(changed.business_id).toBe(first.business_id);
    expect(changed.api_key).toBeNull();
    // The changed client is a client.updated event naming what changed; the unchanged import wrote none.
    const updates = await db.execute<{ client_id: number; actor_type: string; data: unknown }>(
      sql`select client_id, actor_type, data from events where business_id = ${first.business_id} and type = 'client.updated'`,
    );
    expect(updates).toEqual([
      { client_id: clientBefore!.id, actor_type: 'api', data: { client_id: clientBefore!.id, fields: ['name', 'email'] } },
    ]);
    const [business] = await db.select().from(businesses).where(eq(businesses.id, first.business_id));
    expect(business).toMatchObject({
      name: 'Glow Studio & Spa',
      timezone: 'America/New_York',
      fromEmail: `hello@${ext}.test`,
      settings: { record_calls: true },
    });
    const [cy] = await db.select().from(clients).where(eq(clients.id, clientBefore!.id));
    expect(cy).toMatchObject({
      name: 'Cy Renamed',
      email: null,
      phoneNumber: '+13125550102',
      locationId: clientBefore!.locationId,
      clientType: 'new',
    });
    const [ada] = await db
      .select()
      .from(staff)
      .where(and(eq(staff.businessId, first.business_id), eq(staff.externalId, 'st-1')));
    expect(ada).toMatchObject({ active: false, role: 'owner', email: 'ada@glow.test' });
    expect(await countsFor(first.business_id)).toEqual(before);
  });

  it('onboards concurrently with one external_id into one business', async () => {
    const ext = `biz-${uid()}`;
    const body = { external_id: ext, name: 'Twice', timezone: 'UTC', clients: generatedClients(50, ext) };
    const [a, b] = await Promise.all([onboard(body), onboard(body)]);
    expect([a.status, b.status]).toEqual([200, 200]);
    const [x, y] = [await jsonOf(a), await jsonOf(b)];
    expect(x.business_id).toBe(y.business_id);
    expect([x.api_key, y.api_key].filter(Boolean)).toHaveLength(1);
    expect(x.clients).toEqual(y.clients);
    expect((await countsFor(x.business_id)).clients).toBe(50);
  });

  it('is for the platform key only: a business key is 403, no key 401', async () => {
    const t = await createTenant();
    const body = { name: 'Nope', timezone: 'UTC' };
    const res = await onboard(body, { 'x-api-key': t.apiKey });
    expect(res.status).toBe(403);
    expect(await jsonOf(res)).toEqual({ detail: expect.any(String) });
    expect((await onboard(body, {})).status).toBe(401);
  });

  it('settings.recording_notice: stored trimmed, up to 500 characters; blank is no wording of its own (null); longer is a 422', async () => {
    const ext = `biz-${uid()}`;
    const base = { external_id: ext, name: 'Noticed', timezone: 'America/New_York' };
    const settingsOf = async (id: number) => (await db.select().from(businesses).where(eq(businesses.id, id)))[0]!.settings;

    const first = await onboard({ ...base, settings: { record_calls: true, recording_notice: '  This call is recorded.  ' } });
    expect(first.status).toBe(200);
    const id = (await jsonOf(first)).business_id as number;
    expect(await settingsOf(id)).toEqual({ record_calls: true, recording_notice: 'This call is recorded.' });

    const longest = 'a'.repeat(500);
    expect((await onboard({ ...base, settings: { recording_notice: `${longest}   ` } })).status).toBe(200);
    expect(await settingsOf(id)).toEqual({ record_calls: true, recording_notice: longest });

    const tooLong = await onboard({ ...base, settings: { recording_notice: 'a'.repeat(501) } });
    expect(tooLong.status).toBe(422);
    const detail = (await jsonOf(tooLong)).detail as { loc: unknown[] }[];
    expect(detail.map((d) => d.loc)).toContainEqual(['body', 'settings', 'recording_notice']);
    expect(await settingsOf(id)).toEqual({ record_calls: true, recording_notice: longest });

    expect((await onboard({ ...base, settings: { recording_notice: '   ' } })).status).toBe(200);
    expect(await settingsOf(id)).toEqual({ record_calls: true, recording_notice: null });
    // Omitted keeps what is stored.
    await onboard({ ...base, settings: { recording_notice: 'Kept.' } });
    expect((await onboard({ ...base, settings: { record_calls: false } })).status).toBe(200);
    expect(await settingsOf(id)).toEqual({ record_calls: false, recording_notice: 'Kept.' });
  });

  it('answers 422 with the loc of a bad timezone, country, phone or location reference, and writes nothing', async () => {
    const ext = `biz-${uid()}`;
    const expect422 = async (body: unknown, loc: (string | number)[]) => {
      const res = await onboard(body);
      expect(res.status).toBe(422);
      const detail = (await jsonOf(res)).detail as { loc: unknown[] }[];
      expect(detail.map((d) => d.loc)).toContainEqual(loc);
    };
    const base = { external_id: ext, name: 'Bad Data', timezone: 'Europe/Paris' };
    await expect422({ ...base, timezone: 'Mars/Olympus' }, ['body', 'timezone']);
    await expect422({ ...base, timezone: '+02:00' }, ['body', 'timezone']);
    await expect422({ ...base, country: 'XX' }, ['body', 'country']);
    await expect422({ ...base, name: undefined }, ['body', 'name']);
    await expect422({ ...base, locations: [{ external_id: 'l', name: 'L', timezone: 'Nowhere/City' }] }, [
      'body',
      'locations',
      0,
      'timezone',
    ]);
    await expect422({ ...base, clients: [{ external_id: 'c', name: 'C', email: 'not-an-email' }] }, [
      'body',
      'clients',
      0,
      'email',
    ]);
    await expect422(
      { ...base, clients: [...generatedClients(3, 'ok'), { external_id: 'bad', name: 'Bad', phone_number: 'call me maybe' }] },
      ['body', 'clients', 3, 'phone_number'],
    );
    await expect422({ ...base, sms_numbers: ['12'] }, ['body', 'sms_numbers', 0]);
    await expect422({ ...base, staff: [{ external_id: 's', name: 'S', phone_number: '123' }] }, [
      'body',
      'staff',
      0,
      'phone_number',
    ]);
    await expect422(
      {
        ...base,
        locations: [{ external_id: 'here', name: 'Here' }],
        staff: [{ external_id: 's', name: 'S', location_external_id: 'there' }],
      },
      ['body', 'staff', 0, 'location_external_id'],
    );
    await expect422(
      {
        ...base,
        clients: [
          { external_id: 'c0', name: 'C' },
          { external_id: 'c1', name: 'C', location_external_id: 'nowhere' },
        ],
      },
      ['body', 'clients', 1, 'location_external_id'],
    );
    await expect422(
      {
        ...base,
        clients: [
          { external_id: 'dup', name: 'A' },
          { external_id: 'dup', name: 'B' },
        ],
      },
      ['body', 'clients', 1, 'external_id'],
    );
    // A bad row among more than 1,000 clients is still found before anything is stored.
    const many = generatedClients(1_500, 'many');
    many[1_234] = { ...many[1_234]!, phone_number: '555' };
    await expect422({ ...base, clients: many }, ['body', 'clients', 1_234, 'phone_number']);
    // A German number typed nationally is read with the business's country.
    const de = await onboard({ ...base, country: 'de', clients: [{ external_id: 'k', name: 'K', phone_number: '030 1234567' }] });
    expect(de.status).toBe(200);
    const deOut = await jsonOf(de);
    const [k] = await db.select().from(clients).where(eq(clients.id, deOut.clients[0].client_id));
    expect(k!.phoneNumber).toBe('+49301234567');
    // Nothing from the failed attempts was stored: the one business has exactly what the 200 sent.
    expect(await countsFor(deOut.business_id)).toMatchObject({ locations: 0, staff: 0, clients: 1, sms: 0 });

    // A location stored by an earlier onboarding may be referenced later.
    await onboard({ ...base, country: 'DE', locations: [{ external_id: 'stored', name: 'Stored' }] });
    const later = await onboard({ ...base, staff: [{ external_id: 's9', name: 'S', location_external_id: 'stored' }] });
    expect(later.status).toBe(200);
  });

  it('stores the opt-out confirmation and HELP answer settings (at most 320 characters; "" and null kept as sent)', async () => {
    const ext = `biz-${uid()}`;
    const base = { external_id: ext, name: 'Replies Studio', timezone: 'America/New_York' };
    const settingsOf = async (id: number) => (await db.select().from(businesses).where(eq(businesses.id, id)))[0]!.settings;
    const first = await onboard({
      ...base,
      settings: { opt_out_confirmation: '  Replies Studio: unsubscribed. Reply START to resubscribe. ', help_reply: '' },
    });
    expect(first.status).toBe(200);
    const id = (await jsonOf(first)).business_id as number;
    expect(await settingsOf(id)).toEqual({
      opt_out_confirmation: 'Replies Studio: unsubscribed. Reply START to resubscribe.',
      help_reply: '',
    });
    // Omitted keeps the stored value, null clears it (the default text applies again).
    expect((await onboard({ ...base, settings: { help_reply: null } })).status).toBe(200);
    expect(await settingsOf(id)).toEqual({
      opt_out_confirmation: 'Replies Studio: unsubscribed. Reply START to resubscribe.',
      help_reply: null,
    });
    for (const field of ['opt_out_confirmation', 'help_reply']) {
      expect((await onboard({ ...base, settings: { [field]: 'x'.repeat(320) } })).status, field).toBe(200);
      const res = await onboard({ ...base, settings: { [field]: 'x'.repeat(321) } });
      expect(res.status, field).toBe(422);
      expect(((await jsonOf(res)).detail as { loc: unknown[] }[]).map((d) => d.loc)).toContainEqual(['body', 'settings', field]);
    }
  });

  it('stores quiet hours: the business window, a location window (null removes it) and a client time zone', async () => {
    const ext = `biz-${uid()}`;
    const base = { external_id: ext, name: 'Quiet Studio', timezone: 'America/New_York' };
    const first = await onboard({
      ...base,
      sending_window: { start: '09:00', end: '20:30' },
      locations: [
        { external_id: 'fl', name: 'Miami', timezone: 'America/New_York', sending_window: { start: '08:00', end: '20:00' } },
      ],
      clients: [{ external_id: 'c1', name: 'Cleo', timezone: 'America/Chicago', location_external_id: 'fl' }],
    });
    expect(first.status).toBe(200);
    const body = (await jsonOf(first)) as Onboarded;
    const [business] = await db.select().from(businesses).where(eq(businesses.id, body.business_id));
    expect(business).toMatchObject({ sendingWindowStart: 540, sendingWindowEnd: 1230 });
    const locationOf = async () =>
      (await db.select().from(locations).where(eq(locations.id, body.locations[0]!.location_id)))[0]!;
    expect(await locationOf()).toMatchObject({ sendingWindowStart: 480, sendingWindowEnd: 1200 });
    const [client] = await db.select().from(clients).where(eq(clients.id, body.clients[0]!.client_id));
    expect(client!.timezone).toBe('America/Chicago');
    // Omitted keeps the location's window; null removes it (the business's applies again).
    expect((await onboard({ ...base, locations: [{ external_id: 'fl', name: 'Miami' }] })).status).toBe(200);
    expect(await locationOf()).toMatchObject({ sendingWindowStart: 480, sendingWindowEnd: 1200 });
    expect((await onboard({ ...base, locations: [{ external_id: 'fl', name: 'Miami', sending_window: null }] })).status).toBe(
      200,
    );
    expect(await locationOf()).toMatchObject({ sendingWindowStart: null, sendingWindowEnd: null });
    // A bad window or time zone is a 422 at its field, and nothing changes.
    const bad = await onboard({
      ...base,
      sending_window: { start: '20:00', end: '08:00' },
      clients: [{ external_id: 'c1', name: 'Cleo', timezone: 'Mars/Olympus' }],
    });
    expect(bad.status).toBe(422);
    expect(((await jsonOf(bad)).detail as { loc: unknown[] }[]).map((d) => d.loc)).toEqual([
      ['body', 'sending_window', 'end'],
      ['body', 'clients', 0, 'timezone'],
    ]);
  });

  it('answers 409 when an SMS number belongs to another business, and leaves nothing half-onboarded', async () => {
    const other = await createBusiness();
    const typed = typedPhone();
    await createSmsNumber(other.id, e164(typed));
    const ext = `biz-${uid()}`;
    const res = await onboard({ ...fullBody(ext, [typedPhone(), typed]) });
    expect(res.status).toBe(409);
    expect((await jsonOf(res)).detail).toContain(e164(typed));
    expect(await db.select().from(businesses).where(eq(businesses.externalId, ext))).toHaveLength(0);
    const [owner] = await db
      .select()
      .from(businessSmsNumbers)
      .where(eq(businessSmsNumbers.phoneNumber, e164(typed)));
    expect(owner!.businessId).toBe(other.id);
  });

  it('answers 409 when the sender address belongs to another business', async () => {
    const other = await createBusiness();
    const res = await onboard({
      external_id: `biz-${uid()}`,
      name: 'Copycat',
      timezone: 'UTC',
      from_email: other.fromEmail!.toUpperCase(),
    });
    expect(res.status).toBe(409);
  });

  it('marks the import failed when a chunk runs out of retries, and recovers when the chunk later succeeds', async () => {
    const ext = `biz-${uid()}`;
    const out = await jsonOf(
      await onboard({ external_id: ext, name: 'Fragile', timezone: 'UTC', clients: generatedClients(1_001, ext) }),
    );
    const [first, second] = await importJobs(out.business_id);
    const broken = {
      ...first!,
      data: {
        ...first!.data,
        clients: [{ ...first!.data.clients[0]!, client_type: 'bogus' as never }, ...first!.data.clients.slice(1)],
      },
    };
    const log = logger.child({ test: 'onboarding' });

    const retried = await importClientsBatch([{ ...broken, retryCount: 0, retryLimit: 5 }], log);
    expect(retried.get(first!.id)).toMatchObject({ ok: false, error: expect.any(String) });
    expect((await jsonOf(await status(out.business_id))).status).toBe('in_progress'); // retries remain
    await importClientsBatch([{ ...broken, retryCount: 5, retryLimit: 5 }], log);
    let st = await jsonOf<Progress>(await status(out.business_id));
    expect(st.status).toBe('failed');
    expect(st.steps.find((s) => s.name === 'clients')).toMatchObject({
      status: 'failed',
      done: 0,
      total: 1_001,
      detail: expect.stringContaining('Chunk 1'),
    });
    expect((await countsFor(out.business_id)).clients).toBe(0); // the failed chunk rolled back whole

    await importClientsBatch([second!], log);
    expect((await jsonOf(await status(out.business_id))).status).toBe('failed');
    await importClientsBatch([first!], log);
    st = await jsonOf(await status(out.business_id));
    expect(st.status).toBe('completed');
    expect(st.steps.find((s) => s.name === 'clients')).toMatchObject({ status: 'completed', done: 1_001, total: 1_001 });
  });

  it('imports more than 1,000 clients in the background: in_progress, then completed with exact counts; replays change nothing', async () => {
    const ext = `biz-${uid()}`;
    const body = {
      external_id: ext,
      name: 'Big Salon',
      timezone: 'UTC',
      locations: [{ external_id: 'main', name: 'Main' }],
      clients: generatedClients(2_500, ext, { location_external_id: 'main' }),
    };
    const res = await onboard(body);
    expect(res.status).toBe(200);
    const out = await jsonOf(res);
    expect(out).toMatchObject({ onboarding_status: 'in_progress', clients: [], locations: [{ external_id: 'main' }] });
    const id = out.business_id as number;
    expect((await countsFor(id)).clients).toBe(0);
    let st = await jsonOf<Progress>(await status(id));
    expect(st.status).toBe('in_progress');
    expect(st.steps.find((s) => s.name === 'clients')).toMatchObject({ status: 'in_progress', done: 0, total: 2_500 });

    const jobs = await importJobs(id);
    expect(jobs.map((j) => j.data.clients.length)).toEqual([1_000, 1_000, 500]);
    expect(jobs[0]!.data.clients[7]).toMatchObject({ phone_number: '+12125550007', email: `client7@${ext}.test` });

    const log = logger.child({ test: 'onboarding' });
    expect(await importClientsBatch([jobs[0]!], log)).toEqual(new Map([[jobs[0]!.id, { ok: true }]]));
    st = await jsonOf(await status(id));
    expect(st.status).toBe('in_progress');
    expect(st.steps.find((s) => s.name === 'clients')).toMatchObject({ status: 'in_progress', done: 1_000, total: 2_500 });

    const outcomes = await importClientsBatch(jobs.slice(1), log);
    expect([...outcomes.values()]).toEqual([{ ok: true }, { ok: true }]);
    st = await jsonOf(await status(id));
    expect(st.status).toBe('completed');
    expect(st.steps.find((s) => s.name === 'clients')).toMatchObject({ status: 'completed', done: 2_500, total: 2_500 });
    expect((await db.select().from(businesses).where(eq(businesses.id, id)))[0]!.onboardingStatus).toBe('completed');
    expect((await countsFor(id)).clients).toBe(2_500);

    // Found by the clients list filtered by external_id, with the location resolved.
    const [mainLocation] = await db
      .select()
      .from(locations)
      .where(and(eq(locations.businessId, id), eq(locations.externalId, 'main')));
    for (const n of [0, 1_000, 2_499]) {
      const list = await api.get(`/api/v1/businesses/${id}/clients?external_id=${ext}-${n}`, { headers: platform() });
      expect(list.status).toBe(200);
      const page = await jsonOf(list);
      expect(page.total_clients).toBe(1);
      expect(page.clients).toMatchObject([
        {
          external_id: `${ext}-${n}`,
          client_name: `Client ${n}`,
          client_phone_number: `+1212555${String(n).padStart(4, '0')}`,
          client_type: 'new',
          location_id: mainLocation!.id,
        },
      ]);
    }

    // Replaying a chunk (a retry after its commit) changes nothing.
    const snapshot = await db.execute(
      sql`select md5(string_agg(c::text, ',' order by id)) as h from clients c where business_id = ${id}`,
    );
    expect(await importClientsChunk(jobs[1]!.data)).toEqual({ outcome: 'already_imported' });
    expect(
      await db.execute(sql`select md5(string_agg(c::text, ',' order by id)) as h from clients c where business_id = ${id}`),
    ).toEqual(snapshot);
    st = await jsonOf(await status(id));
    expect(st.steps.find((s) => s.name === 'clients')).toMatchObject({ status: 'completed', done: 2_500, total: 2_500 });

    // Onboarding the same body again: a new import that finds everything in place.
    const again = await jsonOf(await onboard(body));
    expect(again).toMatchObject({ business_id: id, api_key: null, onboarding_status: 'in_progress' });
    const newJobs = (await importJobs(id)).filter((j) => j.data.importId !== jobs[0]!.data.importId);
    expect(newJobs).toHaveLength(3);
    for (const job of newJobs)
      expect(await importClientsChunk(job.data)).toMatchObject({ outcome: 'imported', created: 0, updated: 0 });
    expect((await jsonOf(await status(id))).status).toBe('completed');
    expect(
      await db.execute(sql`select md5(string_agg(c::text, ',' order by id)) as h from clients c where business_id = ${id}`),
    ).toEqual(snapshot);
    // A chunk of the replaced import only creates what is missing and never overwrites.
    expect(await importClientsChunk(jobs[2]!.data)).toMatchObject({ outcome: 'superseded', created: 0, updated: 0 });
  });

  it('times 10,000 clients: request, then the background import', async () => {
    const ext = `biz-${uid()}`;
    const body = { external_id: ext, name: 'Timed Salon', timezone: 'UTC', clients: generatedClients(10_000, ext) };
    let t = performance.now();
    const out = await jsonOf(await onboard(body));
    const requestMs = performance.now() - t;
    expect(out.onboarding_status).toBe('in_progress');
    const jobs = await importJobs(out.business_id);
    expect(jobs).toHaveLength(10);
    t = performance.now();
    await importClientsBatch(jobs, logger);
    const importMs = performance.now() - t;
    expect((await countsFor(out.business_id)).clients).toBe(10_000);
    expect((await jsonOf(await status(out.business_id))).status).toBe('completed');

    // The same 10,000 again: the import only compares.
    await onboard(body);
    const again = (await importJobs(out.business_id)).filter((j) => j.data.importId !== jobs[0]!.data.importId);
    t = performance.now();
    await importClientsBatch(again, logger);
    const unchangedMs = performance.now() - t;

    // 1,000 clients imported before the answer.
    const syncBody = {
      external_id: `${ext}-sync`,
      name: 'Sync Salon',
      timezone: 'UTC',
      clients: generatedClients(1_000, `${ext}-sync`),
    };
    t = performance.now();
    const sync = await jsonOf(await onboard(syncBody));
    const syncMs = performance.now() - t;
    expect(sync.clients).toHaveLength(1_000);
    console.log(
      `[onboarding timing] 10,000 clients: request ${requestMs.toFixed(0)} ms (validate + enqueue 10 chunks), ` +
        `background import ${importMs.toFixed(0)} ms (${(importMs / 10).toFixed(0)} ms/chunk), re-import unchanged ${unchangedMs.toFixed(0)} ms; ` +
        `1,000 clients synchronously: ${syncMs.toFixed(0)} ms`,
    );
  });
});

describe('GET /business/{business_id}/onboarding-status', () => {
  it('checks tenancy: own key 200, another business key 403, platform on a missing business 404', async () => {
    const out = await jsonOf(await onboard({ external_id: `biz-${uid()}`, name: 'Tenant', timezone: 'UTC' }));
    const t = await createTenant();
    expect((await status(out.business_id, { 'x-api-key': out.api_key })).status).toBe(200);
    expect((await status(out.business_id, { 'x-api-key': t.apiKey })).status).toBe(403);
    expect((await status(2_000_000_000)).status).toBe(404);
    const st = await jsonOf<Progress>(await status(out.business_id));
    expect(st).toMatchObject({ business_id: out.business_id, status: 'completed' });
    expect(st.steps.find((s) => s.name === 'clients')).toMatchObject({ status: 'completed', done: 0, total: 0 });
  });
});
