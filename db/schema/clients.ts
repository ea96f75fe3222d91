import { sql } from 'drizzle-orm';
import { check, index, integer, pgTable, text, timestamp, unique, uniqueIndex } from 'drizzle-orm/pg-core';
import { CLIENT_TYPES, oneOf, type ClientType } from './enums';
import { locations } from './locations';
import { sameBusinessFk, tenantKeys } from './columns';

export const clients = pgTable(
  'clients',
  {
    ...tenantKeys(),
    externalId: text('external_id'),
    name: text('name'),
    email: text('email'),
    /** E.164, normalised with the business's country on the way in. */
    phoneNumber: text('phone_number'),
    gender: text('gender'),
    imageUrl: text('image_url'),
    clientType: text('client_type').$type<ClientType>().notNull().default('lead'),
    locationId: integer('location_id'),
    /** The client's own IANA time zone when known: quiet hours go by it first (docs/api.md#quiet-hours). */
    timezone: text('timezone'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('clients_business_external_id_key').on(t.businessId, t.externalId),
    unique('clients_business_id_id_key').on(t.businessId, t.id),
    sameBusinessFk('clients_location_fk', t.businessId, t.locationId, locations),
    // Inbound SMS/calls and sends find the client by number; inbound email by address.
    index('clients_business_phone_idx').on(t.businessId, t.phoneNumber),
    index('clients_business_email_idx').on(t.businessId, sql`lower(${t.email})`),
    // Client search (server/services/search.ts, clientMatches): a substring of name, email and
    // number — a number's digits too, numbers being E.164 — within one business (btree_gin), so a
    // term costs the business's matches, not every business's (docs/architecture.md#client-search).
    index('clients_business_search_trgm_idx').using(
      'gin',
      t.businessId,
      sql`(coalesce(${t.name}, '') || ' ' || coalesce(${t.email}, '') || ' ' || coalesce(${t.phoneNumber}, '')) gin_trgm_ops`,
    ),
    check('clients_client_type_check', oneOf(t.clientType, CLIENT_TYPES)),
  ],
);
