import { sql } from 'drizzle-orm';
import { check, index, integer, jsonb, pgTable, text, timestamp, unique, uniqueIndex } from 'drizzle-orm/pg-core';
import { businesses } from './businesses';
import { staff } from './staff';
import { sameBusinessFk, tenantKeys } from './columns';

/** Business API keys (the platform key is configuration, not a row). Only the SHA-256 is stored. */
export const apiKeys = pgTable(
  'api_keys',
  {
    ...tenantKeys(),
    keyHash: text('key_hash').notNull(),
    /** First characters of the key, to tell keys apart in a UI without revealing them. */
    prefix: text('prefix').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    revokedAt: timestamp('revoked_at', { withTimezone: true }),
  },
  (t) => [uniqueIndex('api_keys_key_hash_key').on(t.keyHash), index('api_keys_business_id_idx').on(t.businessId)],
);

/** Staff sessions: revocable rows; the token is random and only its keyed hash is stored. */
export const sessions = pgTable(
  'sessions',
  {
    ...tenantKeys(),
    staffId: integer('staff_id').notNull(),
    tokenHash: text('token_hash').notNull(),
    /**
     * The session whose login link opened this one (a browser session gets its own token, never
     * the API's bearer token); revoking the parent revokes it too.
     */
    parentId: integer('parent_id'),
    ttlSeconds: integer('ttl_seconds').notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    revokedAt: timestamp('revoked_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    lastUsedAt: timestamp('last_used_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('sessions_token_hash_key').on(t.tokenHash),
    unique('sessions_business_id_id_key').on(t.businessId, t.id),
    sameBusinessFk('sessions_staff_fk', t.businessId, t.staffId, staff).onDelete('cascade'),
    sameBusinessFk('sessions_parent_fk', t.businessId, t.parentId, t).onDelete('cascade'),
    index('sessions_staff_idx').on(t.businessId, t.staffId),
    index('sessions_parent_idx').on(t.parentId),
    check('sessions_ttl_check', sql`${t.ttlSeconds} between 60 and 604800`),
  ],
);

/**
 * One-time login codes: what a login link carries instead of a session token. Short-lived, stored
 * as a keyed hash, used at most once (`used_at`); redeeming one opens a child of its session.
 */
export const loginCodes = pgTable(
  'login_codes',
  {
    id: integer('id').primaryKey().generatedAlwaysAsIdentity(),
    sessionId: integer('session_id')
      .notNull()
      .references(() => sessions.id, { onDelete: 'cascade' }),
    codeHash: text('code_hash').notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    usedAt: timestamp('used_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex('login_codes_code_hash_key').on(t.codeHash), index('login_codes_session_idx').on(t.sessionId)],
);

/**
 * Idempotency-Key records: scoped to the caller and the path; the first request claims the row
 * (`running`), later ones replay its stored response or wait for it.
 */
export const idempotencyKeys = pgTable(
  'idempotency_keys',
  {
    id: integer('id').primaryKey().generatedAlwaysAsIdentity(),
    businessId: integer('business_id').references(() => businesses.id, { onDelete: 'cascade' }),
    callerScope: text('caller_scope').notNull(),
    path: text('path').notNull(),
    key: text('key').notNull(),
    requestHash: text('request_hash').notNull(),
    state: text('state').$type<'running' | 'completed'>().notNull().default('running'),
    responseStatus: integer('response_status'),
    responseBody: jsonb('response_body').$type<unknown>(),
    /**
     * While `running`: the request holding the key renews this lease every few seconds; once it
     * lapses the request is dead and another one with the key may take it over.
     */
    lockedUntil: timestamp('locked_until', { withTimezone: true }),
    /** Which request holds the key (a random token): only the holder may complete or release it. */
    holder: text('holder'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
  },
  (t) => [
    uniqueIndex('idempotency_keys_scope_key').on(t.callerScope, t.path, t.key),
    index('idempotency_keys_expires_idx').on(t.expiresAt),
    check('idempotency_keys_state_check', sql`${t.state} in ('running', 'completed')`),
  ],
);

/**
 * Fixed-window request counters per API key or session, shared by every web process through the
 * database. Rows older than a few minutes are swept.
 */
export const rateLimitBuckets = pgTable(
  'rate_limit_buckets',
  {
    callerScope: text('caller_scope').notNull(),
    windowStart: timestamp('window_start', { withTimezone: true }).notNull(),
    count: integer('count').notNull().default(0),
  },
  (t) => [
    uniqueIndex('rate_limit_buckets_pkey_idx').on(t.callerScope, t.windowStart),
    index('rate_limit_buckets_window_idx').on(t.windowStart),
  ],
);
