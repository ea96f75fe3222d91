import { InboxApp } from '@/components/inbox/inbox-app';

export default function InboxPage() {
  return <InboxApp />;
}
