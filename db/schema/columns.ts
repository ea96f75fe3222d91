import { customType, foreignKey, integer, type AnyPgColumn } from 'drizzle-orm/pg-core';
import { businesses } from './businesses';

/** The first columns of a tenant table: its identity key and the business that owns the row (deleted with it). */
export const tenantKeys = () => ({
  id: integer('id').primaryKey().generatedAlwaysAsIdentity(),
  businessId: integer('business_id')
    .notNull()
    .references(() => businesses.id, { onDelete: 'cascade' }),
});

/**
 * A reference that stays inside the business: (business_id, column) → the target's (business_id, id),
 * so a row can only point at a row of its own business (and carries the distribution column Citus needs).
 */
export function sameBusinessFk(
  name: string,
  businessId: AnyPgColumn,
  column: AnyPgColumn,
  target: { businessId: AnyPgColumn; id: AnyPgColumn },
) {
  return foreignKey({ name, columns: [businessId, column], foreignColumns: [target.businessId, target.id] });
}

/** Raw bytes (drizzle has no bytea column of its own): a Buffer in, a Buffer out. */
export const bytea = customType<{ data: Buffer }>({ dataType: () => 'bytea' });

/**
 * A 64-bit transaction id (PostgreSQL's xid8), as text: compared and ordered in SQL only (the event
 * handlers' cursors, server/services/events/dispatch.ts).
 */
export const xid8 = customType<{ data: string }>({ dataType: () => 'xid8' });
