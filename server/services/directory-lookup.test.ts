import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db } from '@/server/db/client';
import { AppError } from '@/server/errors';
import { createBusiness, createClient, createConversation, createTenant } from '@/server/testing/factories';
import { CLIENT_LOOKUP_MAX, lookupClients } from './directory';
import { clientSearchTerm, clientSearchText } from './search';

/**
 * The inbox's client lookup (docs/api.md#client-search): what the top bar's search and New
 * message find as the user types — names, emails, a number however it is typed — within the
 * business, at most a few. The inbox's procedure, with its session's business: server/trpc/lookup.test.ts.
 */

async function studio() {
  const t = await createTenant();
  const b = t.business.id;
  const archie = await createClient(b, {
    name: 'Archie Olson',
    email: 'archie_olson90@example.org',
    phoneNumber: '+14155550175',
  });
  const marcia = await createClient(b, { name: 'Marcia Archer', email: 'marcia@example.org', phoneNumber: '+14155550176' });
  const lead = await createClient(b, { name: null, email: null, phoneNumber: '+16285550175', clientType: 'lead' });
  const archieConversation = await createConversation(b, archie.id);
  return { t, b, archie, marcia, lead, archieConversation };
}

const ids = (r: { clients: { client_id: number }[] }) => r.clients.map((c) => c.client_id);

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => expect.unreachable('accepted'),
    (e: unknown) => e,
  );
}

describe('client lookup', () => {
  it('finds names and emails by any part, case-insensitively; names that start with the term first', async () => {
    const s = await studio();
    // Both names hold "arch"; Archie's starts with it.
    expect(ids(await lookupClients(s.b, 'arch'))).toEqual([s.archie.id, s.marcia.id]);
    expect(ids(await lookupClients(s.b, 'ARCHER'))).toEqual([s.marcia.id]);
    expect(ids(await lookupClients(s.b, 'archie olson'))).toEqual([s.archie.id]);
    expect(ids(await lookupClients(s.b, '  olson  '))).toEqual([s.archie.id]);
    expect(ids(await lookupClients(s.b, 'ARCHIE_OLSON90@'))).toEqual([s.archie.id]);
    expect(ids(await lookupClients(s.b, 'example.org'))).toEqual([s.archie.id, s.marcia.id]);
    // LIKE wildcards are literal: `_` and `%` match only themselves.
    expect(ids(await lookupClients(s.b, 'a_c'))).toEqual([]);
    expect(ids(await lookupClients(s.b, '%_%'))).toEqual([]);
    expect(ids(await lookupClients(s.b, 'nobody here'))).toEqual([]);
  });

  it('finds a number by its last digits or any part, in every way people type it', async () => {
    const s = await studio();
    for (const typed of ['0175', '5550175', '555-0175', '555 0175', '555.0175']) {
      // Archie's and the lead's numbers both end in 555-0175.
      expect(ids(await lookupClients(s.b, typed)), typed).toEqual([s.archie.id, s.lead.id]);
    }
    for (const typed of [
      '(415) 555-0175',
      '415-555-0175',
      '415.555.0175',
      '4155550175',
      '+1 415 555 0175',
      '1 (415) 555-0175',
      '+14155550175',
    ]) {
      const found = await lookupClients(s.b, typed);
      expect(ids(found), typed).toEqual([s.archie.id]);
      expect(found.phone_number, typed).toBe('+14155550175');
    }
    // A partial number is no number to text: nothing is offered as a new client.
    expect((await lookupClients(s.b, '555-0175')).phone_number).toBeNull();
    expect(ids(await lookupClients(s.b, '(415) 555-017'))).toEqual([s.archie.id, s.marcia.id]);
    // Letters make it a name or address search again: no client has "olson 0175" in one piece.
    expect(ids(await lookupClients(s.b, 'olson 0175'))).toEqual([]);
  });

  it('puts the client whose number the term is first, and reads a national number in the business country', async () => {
    const t = await createTenant();
    // The lead's address holds the digits too, and "Aaron" sorts first by name.
    const aaron = await createClient(t.business.id, { name: 'Aaron Byrd', email: 'a4155550175@example.org', phoneNumber: null });
    const archie = await createClient(t.business.id, { name: 'Archie Olson', phoneNumber: '+14155550175' });
    expect(ids(await lookupClients(t.business.id, '(415) 555-0175'))).toEqual([archie.id, aaron.id]);
    expect(ids(await lookupClients(t.business.id, '555-0175'))).toEqual([aaron.id, archie.id]);

    // In the UK a number is typed with its trunk 0, which E.164 drops: read whole, it is found.
    const uk = await createBusiness({ country: 'GB' });
    const ada = await createClient(uk.id, { name: 'Ada Hart', phoneNumber: '+447700900123' });
    const whole = await lookupClients(uk.id, '07700 900123');
    expect(ids(whole)).toEqual([ada.id]);
    expect(whole.phone_number).toBe('+447700900123');
    expect(ids(await lookupClients(uk.id, '7700 900'))).toEqual([ada.id]);
  });

  it("answers each client's conversation (or null) and opt-outs, as New message and the top bar show them", async () => {
    const s = await studio();
    const optedOut = await createClient(s.b, { name: 'Archibald Quiet', phoneNumber: '+14155550999', optedOutSms: true });
    const found = await lookupClients(s.b, 'archi');
    expect(found.clients).toEqual([
      expect.objectContaining({ client_id: optedOut.id, conversation_id: null, last_activity_at: null, opted_out_sms: true }),
      expect.objectContaining({
        client_id: s.archie.id,
        client_name: 'Archie Olson',
        client_phone_number: '+14155550175',
        client_email: 'archie_olson90@example.org',
        client_type: s.archie.clientType,
        conversation_id: s.archieConversation.id,
        last_activity_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        opted_out_sms: false,
        opted_out_email: false,
      }),
    ]);
  });

  it("sees only the business's clients: another business's, names and numbers alike, never appear", async () => {
    const s = await studio();
    const other = await createTenant();
    const twin = await createClient(other.business.id, { name: 'Archie Olson', phoneNumber: '+14155550175' });
    expect(ids(await lookupClients(s.b, 'archie'))).toEqual([s.archie.id]);
    expect(ids(await lookupClients(s.b, '(415) 555-0175'))).toEqual([s.archie.id]);
    expect(ids(await lookupClients(other.business.id, '0175'))).toEqual([twin.id]);

    expect(ids(await lookupClients(other.business.id, 'marcia'))).toEqual([]);
  });

  it('is bounded: 3 to 100 characters once trimmed, at most 8 clients by default and 20 when asked', async () => {
    const s = await studio();
    for (let i = 0; i < 22; i++) await createClient(s.b, { name: `Bulk Client ${String(i).padStart(2, '0')}` });
    const bulk = await lookupClients(s.b, 'bulk client');
    expect(bulk.clients).toHaveLength(8);
    expect(bulk.clients.map((c) => c.client_name)).toEqual([...Array(8)].map((_, i) => `Bulk Client 0${i}`));
    expect((await lookupClients(s.b, 'bulk client', { limit: CLIENT_LOOKUP_MAX })).clients).toHaveLength(20);

    for (const [term, type] of [
      ['ar', 'too_small'],
      ['  ar  ', 'too_small'],
      ['', 'too_small'],
      ['x'.repeat(101), 'too_big'],
    ] as const) {
      const err = await rejection(lookupClients(s.b, term));
      expect(err, term).toBeInstanceOf(AppError);
      expect((err as AppError).code).toBe('validation');
      expect((err as AppError).extra.issues).toEqual([expect.objectContaining({ loc: ['query', 'term'], type })]);
    }
    expect(await rejection(lookupClients(s.b, 'bulk', { limit: 21 }))).toBeInstanceOf(AppError);
    expect(await rejection(lookupClients(s.b, 'bulk', { limit: 0 }))).toBeInstanceOf(AppError);
    // 100 characters is still a term.
    expect((await lookupClients(s.b, 'x'.repeat(100))).clients).toEqual([]);
  });
});

describe('client lookup plan', () => {
  it('searches the very expression the trigram index holds, so a term (a number in part too) can be found through it', async () => {
    // Whether the index is worth it is the planner's call (it may read a small business's rows
    // instead: docs/architecture.md#client-search); that it can serve the search text is checked
    // here, with sequential scans priced out.
    const plans = await db.transaction(async (tx) => {
      await tx.execute(sql`set local enable_seqscan = off`);
      const plans: string[] = [];
      for (const term of ['0175', '555-0175', '(415) 555-0175', 'archie']) {
        const { pattern } = clientSearchTerm(term, 'US');
        const rows = await tx.execute<{ 'QUERY PLAN': string }>(
          sql`explain (costs off) select 1 from clients cl where ${clientSearchText('cl')} ilike ${pattern}`,
        );
        plans.push(rows.map((r) => r['QUERY PLAN']).join('\n'));
      }
      return plans;
    });
    for (const plan of plans) {
      expect(plan).toMatch(/Bitmap Index Scan on clients_business_search_trgm_idx/);
      expect(plan).not.toMatch(/Seq Scan/);
    }
  });
});
