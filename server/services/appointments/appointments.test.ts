import { eq, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { clients } from '@/db/schema';
import { db } from '@/server/db/client';
import { createClient, createConversation, createLocation, createStaff, PLATFORM_KEY } from '@/server/testing/factories';
import { holder, untilBlockedBy } from '@/server/testing/locks';
import { api, deleteJson, getJson, jsonOf, locs, postJson, putJson, restTenant, type RestTenant } from '@/server/testing/http';

/** docs/api.md#appointments over REST: upsert by the platform's id, reads, cancel, bounds and tenancy. */

const DAY = 86_400_000;
const at = (ms: number) => new Date(Date.now() + ms).toISOString();

/** Reminders off: these tests are about the appointment, not its texts. */
async function tenant() {
  const t = await restTenant();
  await putJson(`${t.base}/reminder-rules`, t.key, { rules: [] });
  return t;
}

const body = (clientId: number, over: Record<string, unknown> = {}) => ({
  client_id: clientId,
  starts_at: at(3 * DAY),
  ends_at: at(3 * DAY + 3_600_000),
  service: 'Haircut',
  ...over,
});

/** The id the appointments' sequence gave last. */
const lastId = async () =>
  (
    await db.execute<{ n: number }>(
      sql`select pg_sequence_last_value(pg_get_serial_sequence('appointments', 'id')::regclass)::int as n`,
    )
  )[0]!.n;

const events = (t: RestTenant, type?: string) =>
  db.execute<{
    type: string;
    data: Record<string, unknown>;
    actor_type: string;
    actor_staff_id: number | null;
    client_id: number;
  }>(
    sql`select type, data, actor_type, actor_staff_id, client_id from events
        where business_id = ${t.business.id} and type like 'appointment.%' ${type ? sql`and type = ${type}` : sql``} order by id`,
  );

describe('appointments over REST', () => {
  it('creates (201), updates (200) and repeats without a new event; reads one and the list', async () => {
    const t = await tenant();
    const client = await createClient(t.business.id);
    const staff = await createStaff(t.business.id, { name: 'Dana Scully' });
    const first = await putJson(`${t.base}/appointments/apt-1`, t.key, body(client.id, { staff_id: staff.id }));
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({
      business_id: t.business.id,
      external_id: 'apt-1',
      client_id: client.id,
      staff_id: staff.id,
      location_id: null,
      status: 'booked',
      service: 'Haircut',
      reminders: [],
    });
    const again = await putJson(
      `${t.base}/appointments/apt-1`,
      t.key,
      body(client.id, { staff_id: staff.id, starts_at: first.body.starts_at, ends_at: first.body.ends_at }),
    );
    expect(again.status).toBe(200);
    expect(again.body.updated_at).toBe(first.body.updated_at);
    expect((await events(t)).map((e) => e.type)).toEqual(['appointment.created']);

    const later = at(4 * DAY);
    const moved = await putJson(`${t.base}/appointments/apt-1`, t.session, {
      client_external_id: client.externalId,
      starts_at: later,
      ends_at: at(4 * DAY + 1_800_000),
      notes: 'Prefers the window seat',
    });
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({
      starts_at: later,
      staff_id: staff.id,
      service: 'Haircut',
      notes: 'Prefers the window seat',
    });
    const logged = await events(t);
    expect(logged.map((e) => e.type)).toEqual(['appointment.created', 'appointment.updated']);
    expect(logged[0]).toMatchObject({ actor_type: 'api', client_id: client.id });
    expect(logged[0]!.data).toMatchObject({ external_id: 'apt-1', status: 'booked', staff_id: staff.id });
    expect(logged[1]).toMatchObject({ actor_type: 'staff', actor_staff_id: t.owner.id });
    expect(logged[1]!.data).toMatchObject({
      fields: ['starts_at', 'ends_at', 'notes'],
      previous_starts_at: first.body.starts_at,
      previous_status: 'booked',
      starts_at: later,
    });

    expect((await getJson(`${t.base}/appointments/apt-1`, t.key)).body.notes).toBe('Prefers the window seat');
    await putJson(
      `${t.base}/appointments/apt-0`,
      t.key,
      body(client.id, { starts_at: at(DAY), ends_at: at(DAY + 60_000), status: 'confirmed' }),
    );
    const list = await getJson(`${t.base}/appointments`, t.key);
    expect(list.body).toMatchObject({ total_appointments: 2, page: 1, page_size: 25, next_page: false });
    expect(list.body.appointments.map((a: { external_id: string }) => a.external_id)).toEqual(['apt-0', 'apt-1']);
  });

  it('two upserts of one new appointment at once: one creates (201), the other updates or repeats (200), one created event', async () => {
    const t = await tenant();
    const client = await createClient(t.business.id);
    const b = body(client.id);
    const answers = await Promise.all([1, 2, 3].map(() => putJson(`${t.base}/appointments/race`, t.key, b)));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 200, 201]);
    expect(new Set(answers.map((a) => a.body.appointment_id)).size).toBe(1);
    expect((await events(t)).map((e) => e.type)).toEqual(['appointment.created']);
  });

  it('a PUT of an appointment that exists spends no id: re-PUTs, changed or not, leave the id sequence where it was', async () => {
    const t = await tenant();
    const client = await createClient(t.business.id);
    const first = await putJson(`${t.base}/appointments/nightly`, t.key, body(client.id));
    expect(first.status).toBe(201);
    const same = { ...body(client.id), starts_at: first.body.starts_at, ends_at: first.body.ends_at };
    const before = await lastId();
    for (const b of [same, same, { ...same, notes: 'Window seat' }, same]) {
      expect((await putJson(`${t.base}/appointments/nightly`, t.key, b)).status).toBe(200);
    }
    expect(await lastId()).toBe(before);
    // The next new appointment takes the next id.
    const next = await putJson(`${t.base}/appointments/new-one`, t.key, body(client.id));
    expect(next.body.appointment_id).toBe(before + 1);
  });

  it('a PUT racing another request that creates the same appointment updates that row (200, appointment.updated)', async () => {
    const t = await tenant();
    const client = await createClient(t.business.id);
    const b = body(client.id);
    // The other request's insert, not yet committed when the PUT looks for the appointment.
    const other = holder(sql`insert into appointments (business_id, external_id, client_id, starts_at, ends_at)
                             values (${t.business.id}, 'raced', ${client.id}, ${b.starts_at}, ${b.ends_at})`);
    const held = await other.pid;
    let put: ReturnType<typeof putJson> | undefined;
    try {
      put = putJson(`${t.base}/appointments/raced`, t.key, b);
      await untilBlockedBy('the PUT waits on the other insert', '%insert into "appointments"%', held);
    } finally {
      other.release();
      await other.done;
    }
    const res = await put;
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ external_id: 'raced', service: 'Haircut' });
    const logged = await events(t);
    expect(logged.map((e) => e.type)).toEqual(['appointment.updated']);
    expect(logged[0]!.data).toMatchObject({ appointment_id: res.body.appointment_id, fields: ['service'] });
  });

  it('takes any external id of 1 to 255 characters, URL-encoded in the path', async () => {
    const t = await tenant();
    const client = await createClient(t.business.id);
    const id = 'booking/42 é?#%';
    const res = await putJson(`${t.base}/appointments/${encodeURIComponent(id)}`, t.key, body(client.id));
    expect(res.status).toBe(201);
    expect(res.body.external_id).toBe(id);
    expect((await getJson(`${t.base}/appointments/${encodeURIComponent(id)}`, t.key)).body.external_id).toBe(id);
    const long = await putJson(`${t.base}/appointments/${'x'.repeat(256)}`, t.key, body(client.id));
    expect(long.status).toBe(422);
    expect(locs(long.body)).toEqual([['path', 'external_id']]);
    expect((await putJson(`${t.base}/appointments/${'x'.repeat(255)}`, t.key, body(client.id))).status).toBe(201);
  });

  it('refuses "." and ".." as an external id: URLs resolve them away, so a raw request carrying one is a 422', async () => {
    const t = await tenant();
    const client = await createClient(t.business.id);
    // fetch and the router both resolve `…/appointments/.` (and %2E) to the list's URL: the route is
    // called with the segment as a raw HTTP request could still deliver it.
    const route = await import('@/app/api/v1/businesses/[business_id]/appointments/[external_id]/route');
    for (const id of ['.', '..']) {
      const request = new Request(`http://localhost:3000${t.base}/appointments/x`, {
        method: 'PUT',
        headers: { ...t.key, 'content-type': 'application/json' },
        body: JSON.stringify(body(client.id)),
      });
      const res = await route.PUT(request, { params: Promise.resolve({ business_id: String(t.business.id), external_id: id }) });
      expect(res.status).toBe(422);
      expect(locs(await res.json())).toEqual([['path', 'external_id']]);
    }
    expect((await putJson(`${t.base}/appointments/${encodeURIComponent('...')}`, t.key, body(client.id))).status).toBe(201);
  });

  it('takes the external id exactly as written: no trimming, case kept', async () => {
    const t = await tenant();
    const client = await createClient(t.business.id);
    const ids = ['apt-1', 'Apt-1', ' apt-1 '];
    const made = [];
    for (const id of ids) made.push(await putJson(`${t.base}/appointments/${encodeURIComponent(id)}`, t.key, body(client.id)));
    expect(made.map((m) => [m.status, m.body.external_id])).toEqual(ids.map((id) => [201, id]));
    expect(new Set(made.map((m) => m.body.appointment_id)).size).toBe(3);
  });

  it('keeps what a PUT leaves out, clears what it sends as null', async () => {
    const t = await tenant();
    const client = await createClient(t.business.id);
    const staff = await createStaff(t.business.id);
    const location = await createLocation(t.business.id);
    const url = `${t.base}/appointments/kept`;
    const first = await putJson(
      url,
      t.key,
      body(client.id, { staff_id: staff.id, location_id: location.id, notes: 'Window seat', service: `  ${'x'.repeat(200)} ` }),
    );
    expect(first.status).toBe(201);
    const times = { client_id: client.id, starts_at: first.body.starts_at, ends_at: first.body.ends_at };
    const full = {
      staff_id: staff.id,
      location_id: location.id,
      notes: 'Window seat',
      service: 'x'.repeat(200),
      status: 'booked',
    };
    expect(first.body).toMatchObject(full);
    const kept = await putJson(url, t.key, times);
    expect(kept.body).toMatchObject(full);
    expect(kept.body.updated_at).toBe(first.body.updated_at);
    const cleared = await putJson(url, t.key, { ...times, staff_id: null, location_id: null, notes: null, service: null });
    expect(cleared.body).toMatchObject({ staff_id: null, location_id: null, notes: null, service: null, status: 'booked' });
    // The location by the platform's id, and cleared by it.
    const byExternal = await putJson(url, t.key, { ...times, location_external_id: location.externalId });
    expect(byExternal.body.location_id).toBe(location.id);
    expect((await putJson(url, t.key, { ...times, location_external_id: null })).body.location_id).toBeNull();
  });

  it('files its events under the client, and under the client’s conversation once there is one', async () => {
    const t = await tenant();
    const client = await createClient(t.business.id);
    const b = body(client.id);
    await putJson(`${t.base}/appointments/filed`, t.key, b);
    const conversation = await createConversation(t.business.id, client.id);
    await putJson(`${t.base}/appointments/filed`, t.key, { ...b, notes: 'Moved desk' });
    const filed = await db.execute<{ type: string; client_id: number; conversation_id: number | null }>(sql`
      select type, client_id, conversation_id from events where business_id = ${t.business.id} and type like 'appointment.%' order by id`);
    expect(filed).toEqual([
      { type: 'appointment.created', client_id: client.id, conversation_id: null },
      { type: 'appointment.updated', client_id: client.id, conversation_id: conversation.id },
    ]);
  });

  it('an appointment goes with its client', async () => {
    const t = await tenant();
    const client = await createClient(t.business.id);
    expect((await putJson(`${t.base}/appointments/theirs`, t.key, body(client.id))).status).toBe(201);
    await db.delete(clients).where(eq(clients.id, client.id));
    expect((await getJson(`${t.base}/appointments/theirs`, t.key)).status).toBe(404);
  });

  it('bounds the list by start: from inclusive, to exclusive; one start ordered by id', async () => {
    const t = await tenant();
    const client = await createClient(t.business.id);
    const tomorrow = at(DAY);
    const starts = [tomorrow, tomorrow, at(2 * DAY), at(3 * DAY)];
    const made = [];
    // Made last first: s1 has a lower id than s0, at the same start.
    for (const [i, starts_at] of [...starts.entries()].reverse()) {
      made.unshift(
        (await putJson(`${t.base}/appointments/s${i}`, t.key, body(client.id, { starts_at, ends_at: at(4 * DAY) }))).body,
      );
    }
    const ids = async (query: string) =>
      (await getJson(`${t.base}/appointments?${query}`, t.key)).body.appointments.map(
        (x: { external_id: string }) => x.external_id,
      );
    expect(await ids('')).toEqual(['s1', 's0', 's2', 's3']);
    const q = (from: string, to: string) => `from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`;
    expect(await ids(q(made[0].starts_at, made[3].starts_at))).toEqual(['s1', 's0', 's2']);
    expect(await ids(q(made[2].starts_at, made[3].starts_at))).toEqual(['s2']);
  });

  it('filters the list by time, status, client and location, and pages it', async () => {
    const t = await tenant();
    const [a, b] = [await createClient(t.business.id), await createClient(t.business.id)];
    const location = await createLocation(t.business.id);
    for (let i = 0; i < 5; i++) {
      await putJson(
        `${t.base}/appointments/a${i}`,
        t.key,
        body(i < 3 ? a.id : b.id, {
          starts_at: at((i + 1) * DAY),
          ends_at: at((i + 1) * DAY + 60_000),
          status: i === 4 ? 'completed' : 'booked',
          location_id: i % 2 ? location.id : null,
        }),
      );
    }
    const ids = async (query: string) =>
      (await getJson(`${t.base}/appointments?${query}`, t.key)).body.appointments.map(
        (x: { external_id: string }) => x.external_id,
      );
    expect(await ids(`client_id=${b.id}`)).toEqual(['a3', 'a4']);
    expect(await ids('status=completed')).toEqual(['a4']);
    expect(await ids(`location_id=${location.id}`)).toEqual(['a1', 'a3']);
    expect(await ids(`from=${encodeURIComponent(at(2 * DAY - 60_000))}&to=${encodeURIComponent(at(4 * DAY - 60_000))}`)).toEqual([
      'a1',
      'a2',
    ]);
    const page = await getJson(`${t.base}/appointments?page=2&page_size=2`, t.key);
    expect(page.body).toMatchObject({ total_appointments: 5, page: 2, next_page: true });
    expect(page.body.appointments.map((x: { external_id: string }) => x.external_id)).toEqual(['a2', 'a3']);
  });

  it('DELETE cancels (kept, appointment.canceled once); an unknown one is a 404', async () => {
    const t = await tenant();
    const client = await createClient(t.business.id);
    await putJson(`${t.base}/appointments/gone`, t.key, body(client.id));
    const first = await deleteJson(`${t.base}/appointments/gone`, t.key);
    expect(first.status).toBe(200);
    expect(first.body.status).toBe('canceled');
    expect((await deleteJson(`${t.base}/appointments/gone`, t.key)).status).toBe(200);
    const canceled = await events(t, 'appointment.canceled');
    expect(canceled).toHaveLength(1);
    expect(canceled[0]!.data).toMatchObject({ status: 'canceled', previous_status: 'booked', message_id: null });
    expect((await getJson(`${t.base}/appointments/gone`, t.key)).body.status).toBe('canceled');
    expect((await deleteJson(`${t.base}/appointments/never`, t.key)).status).toBe(404);
  });

  it('refuses bad bodies with a 422 naming each field', async () => {
    const t = await tenant();
    const client = await createClient(t.business.id);
    const url = `${t.base}/appointments/bad`;
    const cases: [Record<string, unknown>, unknown[][]][] = [
      [{ starts_at: at(DAY), ends_at: at(DAY + 1) }, [['body', 'client_id']]],
      [body(2_000_000_000), [['body', 'client_id']]],
      [body(undefined as never, { client_id: undefined, client_external_id: 'nobody' }), [['body', 'client_external_id']]],
      [body(client.id, { client_external_id: client.externalId }), [['body', 'client_external_id']]],
      [body(client.id, { ends_at: at(3 * DAY) }), [['body', 'ends_at']]],
      [body(client.id, { starts_at: '2026-02-30T10:00:00Z' }), [['body', 'starts_at']]],
      [body(client.id, { status: 'maybe' }), [['body', 'status']]],
      // Years PostgreSQL and JavaScript would write differently once the offset is applied.
      [body(client.id, { ends_at: '9999-12-31T23:59:59-23:59' }), [['body', 'ends_at']]],
      [body(client.id, { starts_at: '0001-01-01T00:00:00+23:59' }), [['body', 'starts_at']]],
      [body(client.id, { starts_at: '1969-12-31T23:59:59Z' }), [['body', 'starts_at']]],
      [body(client.id, { service: 'x'.repeat(201) }), [['body', 'service']]],
      [body(client.id, { notes: 'x'.repeat(2001) }), [['body', 'notes']]],
      [body(client.id, { client_id: '3' }), [['body', 'client_id']]],
      [body(client.id, { location_id: 1, location_external_id: 'loc' }), [['body', 'location_external_id']]],
      [body(client.id, { client_id: undefined, client_external_id: 'x'.repeat(256) }), [['body', 'client_external_id']]],
    ];
    for (const [b, expected] of cases) {
      const res = await putJson(url, t.key, b);
      expect(res.status, JSON.stringify(b)).toBe(422);
      expect(locs(res.body), JSON.stringify(b)).toEqual(expected);
    }
    const neither = await putJson(url, t.key, { starts_at: at(DAY), ends_at: at(DAY + 1) });
    expect(neither.body.detail).toEqual([expect.objectContaining({ loc: ['body', 'client_id'], type: 'missing' })]);
    expect((await getJson(`${t.base}/appointments?status=later`, t.key)).status).toBe(422);
    expect((await getJson(`${t.base}/appointments?from=tomorrow`, t.key)).status).toBe(422);
    const far = await getJson(`${t.base}/appointments?to=${encodeURIComponent('9999-12-31T23:59:59-23:59')}`, t.key);
    expect(locs(far.body)).toEqual([['query', 'to']]);
    expect((await getJson(`${t.base}/appointments/bad`, t.key)).status).toBe(404);
  });

  it('keeps to its business: another business’s appointment is a 404, its client, location and staff a 422', async () => {
    const t = await tenant();
    const other = await tenant();
    const mine = await createClient(t.business.id);
    const theirs = await createClient(other.business.id);
    const theirLocation = await createLocation(other.business.id);
    const theirStaff = await createStaff(other.business.id);
    await putJson(`${other.base}/appointments/theirs`, other.key, body(theirs.id));
    expect((await getJson(`${t.base}/appointments/theirs`, t.key)).status).toBe(404);
    expect((await deleteJson(`${t.base}/appointments/theirs`, t.key)).status).toBe(404);
    // Another business's key on this business's path.
    expect((await getJson(`${t.base}/appointments/theirs`, other.key)).status).toBe(403);
    const cross: [Record<string, unknown>, unknown[]][] = [
      [body(theirs.id), ['body', 'client_id']],
      [body(undefined as never, { client_id: undefined, client_external_id: theirs.externalId }), ['body', 'client_external_id']],
      [body(mine.id, { location_id: theirLocation.id }), ['body', 'location_id']],
      [body(mine.id, { location_external_id: theirLocation.externalId }), ['body', 'location_external_id']],
      [body(mine.id, { staff_id: theirStaff.id }), ['body', 'staff_id']],
    ];
    for (const [b, loc] of cross) {
      const res = await putJson(`${t.base}/appointments/mine`, t.key, b);
      expect(res.status, JSON.stringify(b)).toBe(422);
      expect(locs(res.body)).toEqual([loc]);
    }
    expect((await getJson(`${t.base}/appointments?client_id=${theirs.id}`, t.key)).status).toBe(422);
    expect((await getJson(`${t.base}/appointments?location_id=${theirLocation.id}`, t.key)).status).toBe(422);
    // The other business's appointment is untouched by the same external id here.
    const same = await putJson(`${t.base}/appointments/theirs`, t.key, body(mine.id));
    expect(same.status).toBe(201);
    const res = await api.get(`${other.base}/appointments/theirs`, { headers: other.key });
    expect((await jsonOf(res)).client_id).toBe(theirs.id);
  });

  it('onboarding carries upcoming appointments, after its clients; a bad one is a 422 at its index and stores nothing', async () => {
    const platform = { 'x-api-key': PLATFORM_KEY() };
    const ext = `onb-${Date.now()}`;
    const starts = at(5 * DAY);
    const base = {
      external_id: ext,
      name: 'Booked Salon',
      timezone: 'UTC',
      locations: [{ external_id: 'main', name: 'Main' }],
      clients: [{ external_id: 'c1', name: 'Ana Lima', phone_number: '212 555 0101' }],
    };
    const appointment = {
      external_id: 'apt-9',
      client_external_id: 'c1',
      location_external_id: 'main',
      starts_at: starts,
      ends_at: at(5 * DAY + 3_600_000),
    };
    const bad = await postJson('/api/v1/business/onboard', platform, {
      ...base,
      appointments: [appointment, { ...appointment, external_id: 'apt-10', client_external_id: 'nobody' }],
    });
    expect(bad.status).toBe(422);
    expect(locs(bad.body)).toEqual([['body', 'appointments', 1, 'client_external_id']]);
    // One appointment twice in a request: refused at the second, not upserted twice.
    const twice = await postJson('/api/v1/business/onboard', platform, {
      ...base,
      appointments: [appointment, { ...appointment, external_id: 'apt-8' }, { ...appointment, service: 'Color' }],
    });
    expect(twice.status).toBe(422);
    expect(locs(twice.body)).toEqual([['body', 'appointments', 2, 'external_id']]);
    const [none] = await db.execute<{ n: number }>(sql`select count(*)::int as n from businesses where external_id = ${ext}`);
    expect(none!.n).toBe(0);

    // With its clients imported in the background (more than 1,000), not at all.
    const many = await postJson('/api/v1/business/onboard', platform, {
      ...base,
      clients: Array.from({ length: 1_001 }, (_, i) => ({ external_id: i ? `c${i + 1}` : 'c1', name: `Client ${i + 1}` })),
      appointments: [appointment],
    });
    expect(many.status).toBe(422);
    expect(locs(many.body)).toEqual([['body', 'appointments']]);
    const [still] = await db.execute<{ n: number }>(sql`select count(*)::int as n from businesses where external_id = ${ext}`);
    expect(still!.n).toBe(0);

    const ok = await postJson('/api/v1/business/onboard', platform, { ...base, appointments: [appointment] });
    expect(ok.status).toBe(200);
    expect(ok.body.appointments).toEqual([{ external_id: 'apt-9', appointment_id: expect.any(Number) }]);
    const read = await getJson(`/api/v1/businesses/${ok.body.business_id}/appointments/apt-9`, platform);
    expect(read.body).toMatchObject({
      client_id: ok.body.clients[0].client_id,
      location_id: ok.body.locations[0].location_id,
      status: 'booked',
    });
    // The same onboarding again changes nothing.
    const again = await postJson('/api/v1/business/onboard', platform, { ...base, appointments: [appointment] });
    expect(again.body.appointments).toEqual(ok.body.appointments);
    const [logged] = await db.execute<{ n: number }>(
      sql`select count(*)::int as n from events where business_id = ${ok.body.business_id} and type like 'appointment.%'`,
    );
    expect(logged!.n).toBe(1);
  });
});
