import { sql } from 'drizzle-orm';
import type { Tx } from '@/server/db/client';
import { AppError, type ErrorLocation, type ValidationIssue } from '@/server/errors';

/**
 * The client, location and staff member an appointment names (docs/api.md#appointments), each
 * looked up in this business only: another business's id is as unknown as a missing one (a 422 on
 * the field), as for every id in a body or query (docs/api.md#tenancy).
 */

type Kind = 'client' | 'location' | 'staff';
const TABLE = { client: sql`clients`, location: sql`locations`, staff: sql`staff` } as const;
const LABEL = { client: 'Client', location: 'Location', staff: 'Staff member' } as const;

async function idOf(businessId: number, kind: Kind, by: 'id' | 'external_id', value: number | string, tx: Tx) {
  const [row] = await tx.execute<{ id: number }>(
    sql`select id from ${TABLE[kind]} where business_id = ${businessId} and ${sql.identifier(by)} = ${value} limit 1`,
  );
  return row?.id ?? null;
}

/** 422 on `loc` unless this business has the row. */
export async function requireIn(businessId: number, kind: Kind, id: number, loc: ErrorLocation, tx: Tx): Promise<void> {
  if ((await idOf(businessId, kind, 'id', id, tx)) === null) {
    throw AppError.invalid(loc, `${LABEL[kind]} ${id} not found in this business`);
  }
}

type Ref = { id?: number | null; externalId?: string | null };

/**
 * One reference given by our id or the platform's (never both): its id, null when neither was
 * given (or given as null), undefined when the field was left out (an update keeps what it has).
 * Problems are pushed to `issues`.
 */
export async function resolveRef(
  businessId: number,
  kind: 'client' | 'location',
  ref: Ref,
  issues: ValidationIssue[],
  tx: Tx,
): Promise<number | null | undefined> {
  const idField = `${kind}_id`;
  const externalField = `${kind}_external_id`;
  const hasId = ref.id !== undefined && ref.id !== null;
  const hasExternal = ref.externalId !== undefined && ref.externalId !== null;
  if (hasId && hasExternal) {
    issues.push({ loc: ['body', externalField], msg: `give ${idField} or ${externalField}, not both`, type: 'value_error' });
    return undefined;
  }
  if (hasId) {
    const found = await idOf(businessId, kind, 'id', ref.id!, tx);
    if (found === null)
      issues.push({ loc: ['body', idField], msg: `${LABEL[kind]} ${ref.id} not found in this business`, type: 'value_error' });
    return found ?? undefined;
  }
  if (hasExternal) {
    const found = await idOf(businessId, kind, 'external_id', ref.externalId!, tx);
    if (found === null) {
      issues.push({
        loc: ['body', externalField],
        msg: `No ${kind} with external_id ${JSON.stringify(ref.externalId)} in this business`,
        type: 'value_error',
      });
    }
    return found ?? undefined;
  }
  return ref.id === null || ref.externalId === null ? null : undefined;
}

/** The staff member named, if any (null clears it); a 422 issue when this business has none such. */
export async function resolveStaff(businessId: number, staffId: number | null | undefined, issues: ValidationIssue[], tx: Tx) {
  if (staffId === undefined || staffId === null) return staffId;
  const found = await idOf(businessId, 'staff', 'id', staffId, tx);
  if (found === null)
    issues.push({ loc: ['body', 'staff_id'], msg: `Staff member ${staffId} not found in this business`, type: 'value_error' });
  return found ?? undefined;
}
