import { asc, eq } from 'drizzle-orm';
import { db } from '@/server/db/client';
import { businesses, staff } from '@/db/schema';
import { issueLoginCode, issueSession, loginUrl } from '@/server/services/auth';

/**
 * A login link for the first business's owner (development convenience): a 12-hour session and a
 * one-time code valid as long, since the link is printed at start and may be clicked much later.
 */
export async function loginLinkForOwner(): Promise<string> {
  const [owner] = await db
    .select({ staffId: staff.id, businessId: staff.businessId })
    .from(staff)
    .innerJoin(businesses, eq(businesses.id, staff.businessId))
    .where(eq(staff.role, 'owner'))
    .orderBy(asc(businesses.id), asc(staff.id))
    .limit(1);
  if (!owner) return '(no staff yet: onboard a business, then POST /api/v1/auth/token)';
  const session = await issueSession(
    { kind: 'platform', scope: 'cli' },
    { business_id: owner.businessId, staff_id: owner.staffId },
  );
  return loginUrl(await issueLoginCode(session.id, 12 * 3600));
}
