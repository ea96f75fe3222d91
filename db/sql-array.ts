import { sql, type SQL, type SQLWrapper } from 'drizzle-orm';

/**
 * `column = any($1::type[])`: a list of ids or addresses bound as one array parameter. drizzle's
 * `inArray` binds one parameter per value: a statement's text, and so its plan, changes with the
 * list's length, and for a 1,000-item bulk request building, binding and planning a
 * thousand-parameter statement was a large share of the request (bench:send,
 * docs/performance.md#benchsend); one array parameter is one value whatever the length. An empty
 * list matches nothing.
 */
export function equalsAny(
  column: SQLWrapper,
  values: readonly (string | number)[],
  type: 'int' | 'bigint' | 'text' | 'uuid',
): SQL {
  return sql`${column} = any(${sql.param(values)}::${sql.raw(type)}[])`;
}

/** A value as PostgreSQL text, null (or undefined) as NULL: for a statement that casts it per column. */
export const asText = (value: unknown): string | null => (value === null || value === undefined ? null : String(value));

/**
 * Values as one `text[]` parameter, NULLs kept, for a statement that casts them per column
 * (`unnest($1::text[]) … v.x::int`): postgres.js infers an array's type from its first element, so
 * booleans, JSON or a leading null would not survive as such; text needs no inference.
 */
export const textArray = (values: readonly unknown[]): SQL => sql`${sql.param(values.map(asText))}::text[]`;
