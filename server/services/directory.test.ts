import { describe, expect, it } from 'vitest';
import { createClient, createConversation, createLocation, createStaff, createTenant } from '@/server/testing/factories';
import { api, restTenant, getJson } from '@/server/testing/http';

/** Clients and staff lists and the staff profile (docs/api.md#clients-staff-and-locations). */

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

const tenant = restTenant;

const get = getJson;
const clientIds = (body: { clients: { client_id: number }[] }) => body.clients.map((c) => c.client_id);
const staffIds = (body: { staffs: { staff_id: number }[] }) => body.staffs.map((s) => s.staff_id);

async function seedClients() {
  const t = await tenant();
  const b = t.business.id;
  const loc = await createLocation(b, { name: 'Downtown' });
  const ana = await createClient(b, {
    name: 'Ana Lima',
    email: 'ana.lima@example.test',
    phoneNumber: '+13055550101',
    externalId: 'pl-ana',
    locationId: loc.id,
    gender: 'female',
    clientType: 'vip',
  });
  const bruno = await createClient(b, {
    name: 'Bruno Costa',
    email: 'BRUNO@Example.test',
    phoneNumber: '+13055550102',
    externalId: 'pl-bruno',
  });
  const carla = await createClient(b, {
    name: 'Carla 50% Off',
    email: 'carla@example.test',
    phoneNumber: '+13055550103',
    externalId: 'pl-carla',
    optedOutSms: true,
  });
  const lead = await createClient(b, {
    name: null,
    email: null,
    phoneNumber: '+13055550199',
    externalId: null,
    clientType: 'lead',
  });
  const anaConv = await createConversation(b, ana.id);
  const other = await createTenant();
  const otherAna = await createClient(other.business.id, {
    name: 'Ana Other',
    email: 'ana.other@example.test',
    externalId: 'pl-ana-other',
  });
  await createClient(other.business.id, { name: 'Same External', externalId: 'pl-bruno' });
  return { t, loc, ana, bruno, carla, lead, anaConv, other, otherAna };
}

describe('GET /businesses/{id}/clients', () => {
  it('lists this business’s clients by name with every ClientListResponse field; conversation_id or null', async () => {
    const s = await seedClients();
    const res = await get(`${s.t.base}/clients`, s.t.key);
    expect(res.status).toBe(200);
    // By name, nameless last.
    expect(clientIds(res.body)).toEqual([s.ana.id, s.bruno.id, s.carla.id, s.lead.id]);
    expect(res.body).toMatchObject({ total_clients: 4, page: 1, page_size: 25, next_page: false });
    expect(res.body.clients[0]).toEqual({
      client_id: s.ana.id,
      external_id: 'pl-ana',
      client_name: 'Ana Lima',
      client_email: 'ana.lima@example.test',
      client_phone_number: '+13055550101',
      client_gender: 'female',
      client_image_url: null,
      client_type: 'vip',
      location_id: s.loc.id,
      conversation_id: s.anaConv.id,
      opted_out_sms: false,
      opted_out_email: false,
      created_at: s.ana.createdAt.toISOString(),
    });
    expect(res.body.clients[0].created_at).toMatch(ISO_MS);
    expect(res.body.clients[1]).toMatchObject({ client_id: s.bruno.id, conversation_id: null });
    expect(res.body.clients[2]).toMatchObject({ client_id: s.carla.id, opted_out_sms: true, conversation_id: null });
    expect(res.body.clients[3]).toMatchObject({
      client_id: s.lead.id,
      client_name: null,
      external_id: null,
      client_type: 'lead',
    });
    // With a session too.
    expect(clientIds((await get(`${s.t.base}/clients`, s.t.session)).body)).toHaveLength(4);
  });

  it('search: name, email and phone (however typed), case-insensitive, `%` literal, this business only', async () => {
    const s = await seedClients();
    const search = async (term: string) =>
      clientIds((await get(`${s.t.base}/clients?search=${encodeURIComponent(term)}`, s.t.key)).body);
    expect(await search('ana')).toEqual([s.ana.id]);
    expect(await search('LIMA')).toEqual([s.ana.id]);
    expect(await search('bruno@example')).toEqual([s.bruno.id]);
    expect(await search('5550103')).toEqual([s.carla.id]);
    // A number however it is typed (docs/api.md#client-search).
    expect(await search('555-0103')).toEqual([s.carla.id]);
    expect(await search('(305) 555-0103')).toEqual([s.carla.id]);
    expect(await search('0199')).toEqual([s.lead.id]);
    expect(await search('+13055550199')).toEqual([s.lead.id]);
    expect(await search('50%')).toEqual([s.carla.id]);
    expect(await search('a%o')).toEqual([]);
    expect(await search('a_l')).toEqual([]);
    expect(await search('zzz-nobody')).toEqual([]);
    const total = await get(`${s.t.base}/clients?search=example.test`, s.t.key);
    expect(total.body.total_clients).toBe(3);
    // Under 3 characters once trimmed: 422 on query.search (docs/api.md#clients-staff-and-locations, #limits).
    for (const term of ['an', '  an  ', '']) {
      const res = await get(`${s.t.base}/clients?search=${encodeURIComponent(term)}`, s.t.key);
      expect(res.status, JSON.stringify(term)).toBe(422);
      expect(res.body.detail.map((d: { loc: unknown }) => d.loc)).toEqual([['query', 'search']]);
    }
  });

  it('external_id filter: the platform’s id, in this business only', async () => {
    const s = await seedClients();
    const byExt = await get(`${s.t.base}/clients?external_id=pl-bruno`, s.t.key);
    expect(byExt.status).toBe(200);
    expect(clientIds(byExt.body)).toEqual([s.bruno.id]);
    expect(byExt.body.total_clients).toBe(1);
    expect(clientIds((await get(`${s.t.base}/clients?external_id=pl-ana-other`, s.t.key)).body)).toEqual([]);
    expect(clientIds((await get(`${s.t.base}/clients?external_id=pl`, s.t.key)).body)).toEqual([]);
    expect(clientIds((await get(`${s.t.base}/clients?external_id=pl-ana&search=lima`, s.t.key)).body)).toEqual([s.ana.id]);
    expect(clientIds((await get(`${s.t.base}/clients?external_id=pl-ana&search=bruno`, s.t.key)).body)).toEqual([]);
  });

  it('pagination: pages, totals, next_page, past the end empty; bad values 422', async () => {
    const s = await seedClients();
    const page = (q: string) => get(`${s.t.base}/clients?${q}`, s.t.key);
    const p1 = await page('page_size=3');
    expect(clientIds(p1.body)).toEqual([s.ana.id, s.bruno.id, s.carla.id]);
    expect(p1.body).toMatchObject({ total_clients: 4, page: 1, page_size: 3, next_page: true });
    const p2 = await page('page=2&page_size=3');
    expect(clientIds(p2.body)).toEqual([s.lead.id]);
    expect(p2.body.next_page).toBe(false);
    const past = await page('page=3&page_size=3');
    expect(past.body).toMatchObject({ clients: [], total_clients: 4, page: 3, next_page: false });
    expect((await page('page_size=4')).body.next_page).toBe(false);
    for (const q of ['page=0', 'page_size=101', 'page_size=abc']) expect((await page(q)).status, q).toBe(422);
  });
});

describe('GET /businesses/{id}/staffs and /staffs/{staff_id}', () => {
  async function seedStaff() {
    const t = await tenant();
    const b = t.business.id;
    const loc = await createLocation(b);
    const maya = await createStaff(b, {
      name: 'Maya Chen',
      email: 'maya@studio.test',
      phoneNumber: '+13055550201',
      role: 'manager',
      gender: 'female',
      externalId: 'st-maya',
      locationId: loc.id,
      imageUrl: 'https://img.test/maya.png',
    });
    const zed = await createStaff(b, { name: 'Zed Former', active: false, externalId: 'st-zed' });
    const conv = async (assignedStaffId: number | null, status: 'open' | 'pending' | 'snoozed' | 'resolved') =>
      createConversation(b, (await createClient(b)).id, {
        assignedStaffId,
        status,
        ...(status === 'snoozed' ? { snoozedUntil: new Date(Date.now() + 3_600_000) } : {}),
      });
    // Maya: 2 open, 1 pending, 1 snoozed, 1 resolved. Owner: 1 open. Zed: 1 open. 1 open unassigned.
    await conv(maya.id, 'open');
    await conv(maya.id, 'open');
    await conv(maya.id, 'pending');
    await conv(maya.id, 'snoozed');
    await conv(maya.id, 'resolved');
    await conv(t.owner.id, 'open');
    await conv(zed.id, 'open');
    await conv(null, 'open');
    const other = await createTenant();
    await createConversation(other.business.id, (await createClient(other.business.id)).id, {
      assignedStaffId: other.owner.id,
      status: 'open',
    });
    return { t, loc, maya, zed, other };
  }

  it('lists the business’s staff (active and not) with open_conversations = assigned and open', async () => {
    const s = await seedStaff();
    const res = await get(`${s.t.base}/staffs`, s.t.key);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ total_staffs: 3, page: 1, page_size: 25, next_page: false });
    const byId = new Map(res.body.staffs.map((x: { staff_id: number }) => [x.staff_id, x]));
    expect(byId.get(s.maya.id)).toEqual({
      staff_id: s.maya.id,
      external_id: 'st-maya',
      staff_name: 'Maya Chen',
      staff_email: 'maya@studio.test',
      staff_phone_number: '+13055550201',
      staff_gender: 'female',
      staff_image_url: 'https://img.test/maya.png',
      role: 'manager',
      location_id: s.loc.id,
      active: true,
      open_conversations: 2,
    });
    expect(byId.get(s.t.owner.id)).toMatchObject({ role: 'owner', open_conversations: 1, active: true });
    expect(byId.get(s.zed.id)).toMatchObject({ active: false, open_conversations: 1 });
    expect(staffIds(res.body)).not.toContain(s.other.owner.id);
  });

  it('search, external_id and pagination', async () => {
    const s = await seedStaff();
    const list = (q: string) => get(`${s.t.base}/staffs?${q}`, s.t.key);
    expect(staffIds((await list('search=maya')).body)).toEqual([s.maya.id]);
    expect(staffIds((await list('search=MAYA%40STUDIO')).body)).toEqual([s.maya.id]);
    expect(staffIds((await list('search=5550201')).body)).toEqual([s.maya.id]);
    expect(staffIds((await list('search=a%25a')).body)).toEqual([]);
    // Under 3 characters once trimmed: 422 on query.search (docs/api.md#clients-staff-and-locations, #limits).
    for (const q of ['search=ma', 'search=%20ma%20', 'search=']) {
      const res = await list(q);
      expect(res.status, q).toBe(422);
      expect(res.body.detail.map((d: { loc: unknown }) => d.loc)).toEqual([['query', 'search']]);
    }
    expect(staffIds((await list('external_id=st-zed')).body)).toEqual([s.zed.id]);
    expect(staffIds((await list(`external_id=${encodeURIComponent(s.other.owner.externalId!)}`)).body)).toEqual([]);
    const p1 = await list('page_size=2');
    expect(p1.body).toMatchObject({ total_staffs: 3, page_size: 2, next_page: true });
    expect(p1.body.staffs).toHaveLength(2);
    const p2 = await list('page=2&page_size=2');
    expect(p2.body).toMatchObject({ total_staffs: 3, next_page: false });
    expect(p2.body.staffs).toHaveLength(1);
    expect(new Set([...staffIds(p1.body), ...staffIds(p2.body)])).toEqual(new Set([s.t.owner.id, s.maya.id, s.zed.id]));
    expect((await list('page=3&page_size=2')).body).toMatchObject({ staffs: [], next_page: false, total_staffs: 3 });
    expect((await list('page_size=101')).status).toBe(422);
  });

  it('profile: the staff member with open_conversations; unknown or another business’s staff is 404', async () => {
    const s = await seedStaff();
    const res = await get(`${s.t.base}/staffs/${s.maya.id}`, s.t.session);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      staff_id: s.maya.id,
      staff_name: 'Maya Chen',
      role: 'manager',
      open_conversations: 2,
      active: true,
    });
    // Moves with assignment and status changes made through the API.
    const conversations = (await get(`${s.t.base}/conversations?assignment=mine&staff_id=${s.maya.id}&status=open`, s.t.key)).body
      .conversations;
    expect(conversations).toHaveLength(2);
    await api.post(`${s.t.base}/conversations/${conversations[0].conversation_id}/status`, {
      headers: s.t.key,
      body: { status: 'resolved' },
    });
    expect((await get(`${s.t.base}/staffs/${s.maya.id}`, s.t.key)).body.open_conversations).toBe(1);
    await api.post(`${s.t.base}/conversations/${conversations[1].conversation_id}/assign`, {
      headers: s.t.key,
      body: { staff_id: s.t.owner.id },
    });
    expect((await get(`${s.t.base}/staffs/${s.maya.id}`, s.t.key)).body.open_conversations).toBe(0);
    expect((await get(`${s.t.base}/staffs/${s.t.owner.id}`, s.t.key)).body.open_conversations).toBe(2);

    for (const id of [987654321, s.other.owner.id]) {
      const missing = await get(`${s.t.base}/staffs/${id}`, s.t.key);
      expect(missing.status).toBe(404);
      expect(missing.body.detail).toMatch(/not found/i);
    }
    expect((await get(`${s.t.base}/staffs/abc`, s.t.key)).status).toBe(422);
    expect((await get(`/api/v1/businesses/${s.other.business.id}/staffs/${s.other.owner.id}`, s.t.key)).status).toBe(403);
  });
});
