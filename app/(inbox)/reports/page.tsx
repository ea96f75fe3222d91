import type { Metadata } from 'next';
import { ReportsPage } from '@/components/inbox/reports-page';

export const metadata: Metadata = { title: 'Reports · Inbox' };

/** `/reports`: response times, volume, missed calls and deliverability, charted and tabled (docs/api.md#reports). */
export default function Reports() {
  return <ReportsPage />;
}
