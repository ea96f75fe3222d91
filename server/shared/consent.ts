/**
 * Which messages need the client's marketing consent (docs/api.md#consent), written once for the
 * send paths (submit, the send workers' SQL) and the inbox. A campaign, or a message whose
 * notification type is marketing or a review request, promotes the business: it is sent only to a
 * client whose latest consent record for that channel and purpose `marketing` is `given`. Everything
 * else (replies, confirmations, reminders, transactional notices) needs no marketing consent.
 */

export const MARKETING_CATEGORIES = ['campaign'] as const;
export const MARKETING_NOTIFICATION_TYPES = ['marketing', 'review_request'] as const;

export function needsMarketingConsent(category: string | null | undefined, notificationType: string | null | undefined): boolean {
  return (
    (MARKETING_CATEGORIES as readonly string[]).includes(category ?? '') ||
    (MARKETING_NOTIFICATION_TYPES as readonly string[]).includes(notificationType ?? '')
  );
}
