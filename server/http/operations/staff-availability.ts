import { businessPath } from '@/server/schemas/common';
import { OpeningHoursInput, OpeningHoursQuery } from '@/server/schemas/opening-hours';
import {
  AvailabilityResponse,
  SetAvailabilityRequest,
  StaffAvailability,
  StaffScheduleResponse,
  staffPath,
} from '@/server/schemas/staff-availability';
import { defineOperation } from '../operation';

const common = { tag: 'staff-availability', auth: 'any' as const };

const SCHEDULE =
  'A staff member works their own weekly schedule when they have one, else their location’s opening hours (the business’s when they have no location or it has none), read in their location’s time zone (docs: Staff availability). `status` is the clock’s reading: on shift or not, the next shift start and end.';
const WHO =
  'A staff session may change its own; a colleague’s needs the owner or manager role (403). A staff member of another business is a 404.';

export const getStaffSchedule = defineOperation({
  operationId: 'getStaffSchedule',
  method: 'get',
  path: '/businesses/{business_id}/staffs/{staff_id}/schedule',
  summary: "A staff member's working hours and whether they are on shift",
  description: SCHEDULE,
  params: staffPath,
  query: OpeningHoursQuery,
  response: StaffScheduleResponse,
  errors: [403, 404],
  ...common,
});

export const setStaffSchedule = defineOperation({
  operationId: 'setStaffSchedule',
  method: 'put',
  path: '/businesses/{business_id}/staffs/{staff_id}/schedule',
  summary: "Set a staff member's own schedule",
  description: `${SCHEDULE} The body is a schedule with opening hours’ shape and rules (OpeningHoursInput: 422 naming the field for \`25:00\`, an end equal to its start, overlaps, a date twice), and replaces their own. ${WHO}`,
  params: staffPath,
  body: OpeningHoursInput,
  response: StaffScheduleResponse,
  errors: [403, 404],
  ...common,
});

export const clearStaffSchedule = defineOperation({
  operationId: 'clearStaffSchedule',
  method: 'delete',
  path: '/businesses/{business_id}/staffs/{staff_id}/schedule',
  summary: "Remove a staff member's own schedule (they follow their location's opening hours)",
  description: WHO,
  params: staffPath,
  response: StaffScheduleResponse,
  errors: [403, 404],
  ...common,
});

export const getAvailability = defineOperation({
  operationId: 'getAvailability',
  method: 'get',
  path: '/businesses/{business_id}/availability',
  summary: 'Who is available: each active staff member’s Away switch, shift, capacity and waiting conversations',
  description:
    'Available = active, on shift (their schedule) and not away; auto-assignment gives conversations only to available staff with room (`waiting` below `capacity`). `?at=` reads the shifts at another instant; `away` and `waiting` are always now’s.',
  params: businessPath,
  query: OpeningHoursQuery,
  response: AvailabilityResponse,
  errors: [403, 404],
  ...common,
});

export const setAvailability = defineOperation({
  operationId: 'setAvailability',
  method: 'put',
  path: '/businesses/{business_id}/staffs/{staff_id}/availability',
  summary: "Set a staff member's Away switch and capacity",
  description:
    'Either field or both; one left out keeps its value. A change of `away` logs `staff.availability_changed` (actor: the session’s staff member, else `api`); setting what is set logs nothing. A staff session may set its own `away`; a colleague’s, and any `capacity`, needs the owner or manager role (403). A staff member of another business, or inactive, is a 404.',
  params: staffPath,
  body: SetAvailabilityRequest,
  response: StaffAvailability,
  errors: [403, 404],
  ...common,
});
