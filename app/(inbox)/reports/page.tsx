import { ReportsPage } from '@/components/inbox/reports-page';

/** `/reports`: response times, volume, missed calls and deliverability, charted and tabled (docs/api.md#reports). */
export default function Reports() {
  return <ReportsPage />;
}
