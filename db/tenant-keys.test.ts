import { eq, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db } from '@/server/db/client';
import { conversations, messages, staff } from '@/db/schema';
import { createClient, createConversation, createLocation, createTenant } from '@/server/testing/factories';

/**
 * Tenant rows reference each other by (business_id, id) (migration 0009): whatever a service
 * forgets, the database itself refuses a row that points into another business.
 */
const refused = (p: Promise<unknown>) => expect(p).rejects.toMatchObject({ cause: { code: '23503' } });

describe('references stay inside the business', () => {
  it('refuses a conversation, message, staff location or assignee from another business', async () => {
    const a = await createTenant();
    const b = await createTenant();
    const clientOfB = await createClient(b.business.id);
    const locationOfB = await createLocation(b.business.id);
    const clientOfA = await createClient(a.business.id);
    const conversationOfA = await createConversation(a.business.id, clientOfA.id);

    await refused(db.insert(conversations).values({ businessId: a.business.id, clientId: clientOfB.id }));
    await refused(db.insert(staff).values({ businessId: a.business.id, name: 'Elsewhere', locationId: locationOfB.id }));
    await refused(
      db.insert(messages).values({
        businessId: a.business.id,
        conversationId: conversationOfA.id,
        clientId: clientOfB.id,
        direction: 'outbound',
        messageType: 'NOTE',
        origin: 'system',
        senderType: 'staff',
        status: 'sent',
      }),
    );
    await refused(db.update(conversations).set({ assignedStaffId: b.owner.id }).where(eq(conversations.id, conversationOfA.id)));
    // Within the business everything is accepted as before.
    await db.update(conversations).set({ assignedStaffId: a.owner.id }).where(eq(conversations.id, conversationOfA.id));
  });
});

describe("reports' tables name their business", () => {
  // Every report table is a business's figures, deleted with it: report_replies lacked the foreign
  // key its siblings have (migration report_replies_fk).
  it('each report_* table has a foreign key from business_id to businesses', async () => {
    const tables = await db.execute<{ table: string; fk: boolean }>(sql`
      select t.table_name as table, exists (
          select 1 from pg_constraint k
          join pg_attribute a on a.attrelid = k.conrelid and a.attnum = any (k.conkey)
          where k.contype = 'f' and k.conrelid = quote_ident(t.table_name)::regclass
            and k.confrelid = 'businesses'::regclass and a.attname = 'business_id' and cardinality(k.conkey) = 1
        ) as fk
      from information_schema.tables t
      where t.table_schema = 'public' and t.table_type = 'BASE TABLE' and t.table_name like 'report\_%'
      order by 1`);
    expect(tables.map((t) => t.table)).toEqual(
      expect.arrayContaining(['report_cycles', 'report_missed_calls', 'report_replies']),
    );
    expect(tables.filter((t) => !t.fk).map((t) => t.table)).toEqual([]);
  });
});
