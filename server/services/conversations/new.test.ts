import { and, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db } from '@/server/db/client';
import { clients, conversations } from '@/db/schema';
import { createClient } from '@/server/testing/factories';
import { locs, postJson, restTenant } from '@/server/testing/http';
import { lookupClients } from '@/server/services/directory';

/**
 * Starting a conversation (docs/api.md#new-conversation) with a client, a number typed by hand or
 * an email address: a new number or address becomes a lead, an existing one lands in its client's
 * conversation; the picker finds clients by name, email and number as a person types it.
 */
let counter = 0;
const newLocalNumber = () => `(347) 555-${String(1000 + (++counter % 9000)).padStart(4, '0')}`;
const e164 = (typed: string) => `+1${typed.replace(/\D/g, '')}`;

describe('POST /conversations with a number or an address', () => {
  it('a new number typed as a person would becomes a lead with one conversation; typed again, the same one', async () => {
    const t = await restTenant();
    const typed = `${newLocalNumber()}`;
    const first = await postJson(`${t.base}/conversations`, t.key, { phone_number: typed });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ client_phone_number: e164(typed), client_type: 'lead', status: 'open' });
    const again = await postJson(`${t.base}/conversations`, t.session, { phone_number: e164(typed) });
    expect(again.body.conversation_id).toBe(first.body.conversation_id);
    const leads = await db
      .select()
      .from(clients)
      .where(and(eq(clients.businessId, t.business.id), eq(clients.phoneNumber, e164(typed))));
    expect(leads).toHaveLength(1);
  });

  it("an address lands in its client's conversation whatever its case; a new one becomes a lead", async () => {
    const t = await restTenant();
    const known = await createClient(t.business.id, { email: 'Rosa.Diaz@Example.test' });
    const found = await postJson(`${t.base}/conversations`, t.key, { email: 'rosa.diaz@example.TEST' });
    expect(found.status).toBe(200);
    expect(found.body).toMatchObject({ client_id: known.id });
    const fresh = await postJson(`${t.base}/conversations`, t.key, { email: 'New.Person@example.test' });
    expect(fresh.body).toMatchObject({ client_email: 'new.person@example.test', client_type: 'lead' });
    expect(fresh.body.client_id).not.toBe(known.id);
    const rows = await db.select().from(conversations).where(eq(conversations.businessId, t.business.id));
    expect(rows).toHaveLength(2);
  });

  it('refuses anything but exactly one valid target, storing nothing', async () => {
    const t = await restTenant();
    const other = await restTenant();
    const foreign = await createClient(other.business.id);
    const cases: [Record<string, unknown>, unknown[][]][] = [
      [{}, [['body']]],
      [{ client_id: foreign.id, email: 'a@b.test' }, [['body']]],
      [{ phone_number: 'call me maybe' }, [['body', 'phone_number']]],
      [{ phone_number: '123' }, [['body', 'phone_number']]],
      [{ email: 'not an address' }, [['body', 'email']]],
      [{ client_id: foreign.id }, [['body', 'client_id']]],
    ];
    for (const [body, where] of cases) {
      const res = await postJson(`${t.base}/conversations`, t.key, body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(locs(res.body)).toEqual(where);
    }
    expect(await db.select().from(clients).where(eq(clients.businessId, t.business.id))).toHaveLength(0);
  });
});

describe('the new-message picker (the client lookup: directory.test.ts)', () => {
  it('finds clients by name, email, and by a number as typed; offers the typed number read in the business country', async () => {
    const t = await restTenant();
    const typed = newLocalNumber();
    const maria = await createClient(t.business.id, { name: 'Maria Gomez', phoneNumber: e164(typed) });
    await createClient(t.business.id, { name: 'Marius Bell', email: 'marius@bell.test' });
    const other = await restTenant();
    await createClient(other.business.id, { name: 'Maria Elsewhere' });

    const byName = await lookupClients(t.business.id, 'mari');
    expect(byName.clients.map((c) => c.client_name)).toEqual(['Maria Gomez', 'Marius Bell']);
    expect(byName.phone_number).toBeNull();
    const byNumber = await lookupClients(t.business.id, typed);
    expect(byNumber.phone_number).toBe(e164(typed));
    expect(byNumber.clients.map((c) => c.client_id)).toEqual([maria.id]);
    expect((await lookupClients(t.business.id, 'bell.test')).clients.map((c) => c.client_name)).toEqual(['Marius Bell']);
    // LIKE wildcards are matched literally.
    expect((await lookupClients(t.business.id, '%_%')).clients).toEqual([]);
  });
});
