import { eq, sql } from 'drizzle-orm';
import { businesses } from '@/db/schema';
import type { BusinessSettings } from '@/db/schema/businesses';
import { db, type Tx } from '@/server/db/client';
import { AppError } from '@/server/errors';

/** Sets the business settings given (an undefined field is left as it is; null is stored); 404 for no such business. */
export async function mergeBusinessSettings(businessId: number, input: Partial<BusinessSettings>, tx: Tx = db): Promise<void> {
  const given = Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined));
  const [row] = await tx
    .update(businesses)
    .set({ settings: sql`${businesses.settings} || ${JSON.stringify(given)}::jsonb`, updatedAt: sql`now()` })
    .where(eq(businesses.id, businessId))
    .returning({ id: businesses.id });
  if (!row) throw AppError.notFound('Business');
}
