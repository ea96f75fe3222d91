import { OpeningHoursSettings } from '@/components/inbox/opening-hours-settings';

/** `/settings/opening-hours`: when the business and its locations answer their clients (docs/api.md#opening-hours). */
export default function OpeningHoursPage() {
  return <OpeningHoursSettings />;
}
