import { and, eq } from 'drizzle-orm';
import { db, type Tx } from '@/server/db/client';
import { messages } from '@/db/schema';
import { AppError } from '@/server/errors';
import { emailFrameDocument, sanitizeEmailHtml } from '@/server/lib/email-html';

/**
 * An email's HTML part as the inbox shows it: sanitized, inside a frame document whose CSP blocks
 * scripts and remote loads (server/lib/email-html.ts). `null` document for a text-only email.
 */
export async function emailView(businessId: number, messageId: number, allowRemoteImages: boolean, tx: Tx = db) {
  const [row] = await tx
    .select({ channel: messages.channel, metadata: messages.providerMetadata })
    .from(messages)
    .where(and(eq(messages.businessId, businessId), eq(messages.id, messageId)))
    .limit(1);
  if (!row || row.channel !== 'email') throw AppError.notFound('Email');
  const html = typeof row.metadata?.html === 'string' ? row.metadata.html : null;
  if (!html) return { document: null, blockedImages: 0 };
  const clean = sanitizeEmailHtml(html, { allowRemoteImages });
  return { document: emailFrameDocument(clean, { allowRemoteImages }), blockedImages: clean.blockedImages };
}
