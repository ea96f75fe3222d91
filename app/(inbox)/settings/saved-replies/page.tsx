import { SavedRepliesSettings } from '@/components/inbox/saved-replies-settings';

/** `/settings/saved-replies`: the business's saved replies, for staff to write and keep (docs/api.md#saved-replies). */
export default function SavedRepliesPage() {
  return <SavedRepliesSettings />;
}
