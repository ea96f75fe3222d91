import { StaffSchedulesSettings } from '@/components/inbox/staff-schedules-settings';

/** `/settings/staff-schedules`: who is on shift when, and capacities (docs/api.md#staff-availability). */
export default function StaffSchedulesPage() {
  return <StaffSchedulesSettings />;
}
