import { QuietHoursSettings } from '@/components/inbox/quiet-hours-settings';

/** `/settings/quiet-hours`: the sending windows automated texts keep to (docs/api.md#quiet-hours). */
export default function QuietHoursPage() {
  return <QuietHoursSettings />;
}
