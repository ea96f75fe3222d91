import { AssignmentSettings } from '@/components/inbox/assignment-settings';

/** `/settings/assignment`: who new conversations go to (docs/api.md#auto-assignment). */
export default function AssignmentPage() {
  return <AssignmentSettings />;
}
