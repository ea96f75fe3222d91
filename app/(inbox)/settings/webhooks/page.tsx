import { WebhookSettings } from '@/components/inbox/webhook-settings';

/** `/settings/webhooks`: the business's webhook endpoints and their deliveries, for owners and managers (docs/api.md#webhooks-you-receive-from-us). */
export default function WebhooksPage() {
  return <WebhookSettings />;
}
