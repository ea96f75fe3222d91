import { sql } from 'drizzle-orm';
import { db, type Tx } from '@/server/db/client';
import type { NeedsAttentionReason } from '@/server/shared/conversations';

/**
 * How many conversations need attention (docs/api.md#needs-attention): the inbox's Needs attention
 * view's count, on the partial index conversations_business_needs_attention_idx.
 */
export async function needsAttentionCount(businessId: number, tx: Tx = db): Promise<number> {
  const [row] = await tx.execute<{ n: number }>(sql`
    select count(*)::int as n from conversations where business_id = ${businessId} and needs_attention_reason is not null`);
  return row?.n ?? 0;
}

/** Flags a conversation as needing attention for an appointment (a later reason replaces an earlier one). */
export async function flagNeedsAttention(
  businessId: number,
  conversationId: number,
  flag: { reason: NeedsAttentionReason; appointmentId: number; at: Date },
  tx: Tx,
): Promise<void> {
  await tx.execute(sql`
    update conversations set needs_attention_reason = ${flag.reason}, needs_attention_appointment_id = ${flag.appointmentId},
      needs_attention_since = ${flag.at.toISOString()}::timestamptz
    where business_id = ${businessId} and id = ${conversationId}`);
}

/**
 * Staff or the platform decided the appointment (confirmed or canceled it, by the inbox, REST's
 * outcome paths or a PUT of its status): the conversations flagged for it need attention no more.
 */
export async function clearNeedsAttentionFor(businessId: number, appointmentId: number, tx: Tx): Promise<void> {
  await tx.execute(sql`
    update conversations set needs_attention_reason = null, needs_attention_appointment_id = null, needs_attention_since = null
    where business_id = ${businessId} and needs_attention_appointment_id = ${appointmentId}`);
}
