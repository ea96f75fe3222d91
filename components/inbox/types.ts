import type { inferRouterInputs, inferRouterOutputs } from '@trpc/server';
import type { ConversationStatus } from '@/server/shared/conversations';
import type { AppRouter } from '@/server/trpc/root';

type Outputs = inferRouterOutputs<AppRouter>;
type Inputs = inferRouterInputs<AppRouter>;

export type ConversationRow = Outputs['inbox']['list']['conversations'][number];
export type ConversationDetails = Outputs['inbox']['conversation'];
export type MessageItem = Outputs['inbox']['messages']['messages'][number];
export type CardAppointment = Outputs['inbox']['appointments']['upcoming'][number];
export type Me = Outputs['session']['me'];
export type WebhookEndpoint = Outputs['inbox']['webhookEndpoints']['webhook_endpoints'][number];
export type WebhookDelivery = Outputs['inbox']['webhookDeliveries']['deliveries'][number];
export type ListInput = Inputs['inbox']['list'];

/** What the sidebar selects: one status tab plus optional narrowing. */
export type View = {
  status: ConversationStatus;
  assignment: 'all' | 'mine' | 'unassigned';
  channel?: 'sms' | 'email' | 'voice';
  location_id?: number;
  label?: string;
  unread?: boolean;
  /** Only conversations with a possible opt-out waiting for staff (docs/api.md#possible-opt-outs). */
  possibleOptOut?: boolean;
  /** Conversations with flagged messages, whatever their status: where a flagged message is found again. */
  flagged?: boolean;
  /** Conversations where I was @mentioned in a note I have not opened, whatever their status (docs/api.md#mentions). */
  mentioned?: boolean;
  /** Replies to appointment reminders for staff to decide, whatever their status (docs/api.md#needs-attention). */
  needsAttention?: boolean;
};

export function listInput(view: View): ListInput {
  return {
    status: view.flagged || view.mentioned || view.needsAttention ? undefined : [view.status],
    assignment: view.assignment,
    channel: view.channel,
    location_id: view.location_id,
    label: view.label,
    unread: view.unread ? 'true' : undefined,
    possible_opt_out: view.possibleOptOut ? 'true' : undefined,
    flagged: view.flagged ? 'true' : undefined,
    mentioned: view.mentioned || undefined,
    needs_attention: view.needsAttention ? 'true' : undefined,
    page_size: 50,
  };
}
