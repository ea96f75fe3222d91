/**
 * Outgoing webhooks' shared limits and names (docs/api.md#webhooks-you-receive-from-us): pure, so
 * the schema, the API and the inbox's settings page state the same bounds.
 */
export const MAX_WEBHOOK_URL = 2048;
export const MAX_WEBHOOK_DESCRIPTION = 500;
/**
 * Who may manage the endpoints with a staff session (docs/api.md#staff-sessions, Roles): REST and
 * tRPC refuse the other roles, and the inbox hides the settings page from them.
 */
export const WEBHOOK_MANAGER_ROLES = ['owner', 'manager'] as const;
/** A business's endpoints: enough for a few platforms and their staging copies. */
export const MAX_WEBHOOK_ENDPOINTS = 20;
/** What a delivery keeps of the receiver's answer for the delivery log. */
export const MAX_WEBHOOK_RESPONSE_BODY = 2048;
/** How long a rotated-out secret keeps signing beside the new one. */
export const PREVIOUS_SECRET_HOURS = 24;

/**
 * A delivery's state: waiting for its (next) attempt, delivered (a 2xx), or failed (its last
 * attempt failed, or its endpoint was disabled): failed ones can be redelivered.
 */
export const WEBHOOK_DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;
export type WebhookDeliveryStatus = (typeof WEBHOOK_DELIVERY_STATUSES)[number];

/**
 * The Standard Webhooks retry schedule: the wait after each failed attempt, so an event is tried
 * ten times over about three days (5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h).
 */
export const RETRY_DELAYS_SECONDS = [5, 300, 1800, 7200, 18000, 36000, 50400, 72000, 86400] as const;
export const MAX_WEBHOOK_ATTEMPTS = RETRY_DELAYS_SECONDS.length + 1;
/** An endpoint that has failed every attempt for this long is disabled. */
export const DISABLE_AFTER_FAILING_DAYS = 5;
