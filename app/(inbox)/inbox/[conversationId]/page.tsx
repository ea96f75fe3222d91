import { notFound, redirect } from 'next/navigation';

/**
 * `/inbox/[conversationId]` (docs/api.md#surfaces): a link to one conversation. The inbox keeps the open
 * conversation in `?c=` (components/inbox/inbox-app.tsx), so this path opens it there; the
 * conversation is loaded through tRPC, which checks it belongs to the staff member's business.
 */
export default async function ConversationPage({ params }: { params: Promise<{ conversationId: string }> }) {
  const { conversationId } = await params;
  if (!/^[1-9]\d{0,9}$/.test(conversationId)) notFound();
  redirect(`/inbox?c=${conversationId}`);
}
