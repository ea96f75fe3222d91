import { describe, expect, it } from 'vitest';
import { loggedEvents } from '@/server/testing/log-events';
import { createClient, createConversation } from '@/server/testing/factories';
import { api, getJson, jsonOf, locs, patchJson, restTenant } from '@/server/testing/http';

/** A client's name and email changed by the API: PATCH /businesses/{business_id}/clients/{client_id} (docs/api.md#clients-staff-and-locations). */

describe('PATCH /businesses/{business_id}/clients/{client_id}', () => {
  it('names a lead and changes its address, logging client.updated with the changed fields and who changed them', async () => {
    const t = await restTenant();
    const lead = await createClient(t.business.id, { name: null, email: null, phoneNumber: '+14155550199', clientType: 'lead' });
    await createConversation(t.business.id, lead.id);
    const path = `${t.base}/clients/${lead.id}`;

    const named = await patchJson(path, t.session, { name: '  Rosa Diaz  ' });
    expect(named.status).toBe(200);
    expect(named.body).toMatchObject({ client_id: lead.id, client_name: 'Rosa Diaz', client_email: null, client_type: 'lead' });
    const emailed = await patchJson(path, t.key, { email: ' Rosa.Diaz@Example.TEST ' });
    expect(emailed.body).toMatchObject({ client_name: 'Rosa Diaz', client_email: 'rosa.diaz@example.test' });
    // The same values again change nothing and log nothing.
    expect((await patchJson(path, t.key, { name: 'Rosa Diaz', email: 'rosa.diaz@example.test' })).status).toBe(200);
    // null clears a field.
    const cleared = await patchJson(path, t.key, { email: null });
    expect(cleared.body).toMatchObject({ client_name: 'Rosa Diaz', client_email: null });
    expect((await getJson(path, t.key)).body).toMatchObject({ client_name: 'Rosa Diaz', client_email: null });

    expect([...(await loggedEvents(t.business.id, 'client.updated'))]).toEqual([
      {
        client_id: lead.id,
        conversation_id: null,
        actor_type: 'staff',
        actor_staff_id: t.owner.id,
        data: { client_id: lead.id, fields: ['name'] },
      },
      {
        client_id: lead.id,
        conversation_id: null,
        actor_type: 'api',
        actor_staff_id: null,
        data: { client_id: lead.id, fields: ['email'] },
      },
      {
        client_id: lead.id,
        conversation_id: null,
        actor_type: 'api',
        actor_staff_id: null,
        data: { client_id: lead.id, fields: ['email'] },
      },
    ]);
  });

  it("is a 404 for another business's client or an unknown one, a 403 on another business's path; nothing changes", async () => {
    const mine = await restTenant();
    const other = await restTenant();
    const theirs = await createClient(other.business.id, { name: 'Theirs' });
    const res = await patchJson(`${mine.base}/clients/${theirs.id}`, mine.key, { name: 'Mine now' });
    expect(res.status).toBe(404);
    expect((await patchJson(`${mine.base}/clients/2147483647`, mine.key, { name: 'Nobody' })).status).toBe(404);
    expect((await patchJson(`${other.base}/clients/${theirs.id}`, mine.key, { name: 'Mine now' })).status).toBe(403);
    expect((await patchJson(`${other.base}/clients/${theirs.id}`, mine.session, { name: 'Mine now' })).status).toBe(403);
    expect((await getJson(`${other.base}/clients/${theirs.id}`, other.key)).body.client_name).toBe('Theirs');
    expect([...(await loggedEvents(other.business.id, 'client.updated'))]).toEqual([]);
  });

  it.each([
    ['a name over 200 characters', { name: 'n'.repeat(201) }, [['body', 'name']]],
    ['a blank name', { name: '   ' }, [['body', 'name']]],
    ['a name that is not a string', { name: 42 }, [['body', 'name']]],
    ['an address that is not one', { email: 'rosa at example' }, [['body', 'email']]],
    ['an address over 254 characters', { email: `${'a'.repeat(250)}@x.test` }, [['body', 'email']]],
    ['nothing to change', {}, [['body']]],
  ])('answers 422 with the field for %s, and changes nothing', async (_what, body, expected) => {
    const t = await restTenant();
    const client = await createClient(t.business.id, { name: 'Ana Lima' });
    const res = await patchJson(`${t.base}/clients/${client.id}`, t.key, body);
    expect(res.status).toBe(422);
    expect(locs(res.body)).toEqual(expected);
    expect((await getJson(`${t.base}/clients/${client.id}`, t.key)).body.client_name).toBe('Ana Lima');
    expect([...(await loggedEvents(t.business.id, 'client.updated'))]).toEqual([]);
  });

  it('states its bounds in the OpenAPI document', async () => {
    const doc = await jsonOf(await api.get('/api/v1/openapi.json'));
    const op = doc.paths['/businesses/{business_id}/clients/{client_id}'].patch;
    expect(op.requestBody.content['application/json'].schema.$ref).toBe('#/components/schemas/UpdateClientRequest');
    expect(op.responses['422']).toBeDefined();
    const { properties } = doc.components.schemas.UpdateClientRequest;
    expect(JSON.stringify(properties.name)).toContain('"maxLength":200');
    expect(JSON.stringify(properties.email)).toContain('"maxLength":254');
  });
});
