import { AfterHoursSettings } from '@/components/inbox/after-hours-settings';

/** `/settings/after-hours`: the answer a client gets when they write while closed (docs/api.md#after-hours-answer). */
export default function AfterHoursPage() {
  return <AfterHoursSettings />;
}
