import { businessPath } from '@/server/schemas/common';
import { OpeningHoursInput, OpeningHoursQuery, OpeningHoursResponse } from '@/server/schemas/opening-hours';
import { locationPath } from '@/server/schemas/sending-windows';
import { defineOperation } from '../operation';

const common = { tag: 'opening-hours', auth: 'any' as const, errors: [403, 404] };

const RULES =
  'Opening hours (docs: Opening hours) are when the business answers its clients — not quiet hours, the sending window automated texts keep to. A weekly schedule of intervals by the day they start on (an end at or before the start runs into the next day: 22:00–02:00) and dated exceptions that replace a date’s intervals (none: closed all day), read in the time zone of the location, else of the business. `status` is the clock’s reading: open or not, the next opening and the next closing.';
const PUT_RULES =
  'The body replaces the whole schedule. 422 naming the field for a time that is not HH:MM (`25:00`), an end equal to its start, intervals that overlap (within a day, or with the previous day’s interval running past midnight), a date listed twice or not on the calendar.';

export const getBusinessOpeningHours = defineOperation({
  operationId: 'getBusinessOpeningHours',
  method: 'get',
  path: '/businesses/{business_id}/opening-hours',
  summary: "The business's opening hours and whether it is open",
  description: `${RULES} A business that has set none is open around the clock (\`source: "default"\`).`,
  params: businessPath,
  query: OpeningHoursQuery,
  response: OpeningHoursResponse,
  ...common,
});

export const setBusinessOpeningHours = defineOperation({
  operationId: 'setBusinessOpeningHours',
  method: 'put',
  path: '/businesses/{business_id}/opening-hours',
  summary: "Set the business's opening hours",
  description: `${RULES} ${PUT_RULES} Locations without their own keep to these.`,
  params: businessPath,
  body: OpeningHoursInput,
  response: OpeningHoursResponse,
  ...common,
});

export const getLocationOpeningHours = defineOperation({
  operationId: 'getLocationOpeningHours',
  method: 'get',
  path: '/businesses/{business_id}/locations/{location_id}/opening-hours',
  summary: 'The opening hours that apply at a location and whether it is open',
  description: `${RULES} A location without its own keeps to the business's (\`source: "business"\`), read in its own time zone.`,
  params: locationPath,
  query: OpeningHoursQuery,
  response: OpeningHoursResponse,
  ...common,
});

export const setLocationOpeningHours = defineOperation({
  operationId: 'setLocationOpeningHours',
  method: 'put',
  path: '/businesses/{business_id}/locations/{location_id}/opening-hours',
  summary: "Set a location's own opening hours",
  description: `${RULES} ${PUT_RULES}`,
  params: locationPath,
  body: OpeningHoursInput,
  response: OpeningHoursResponse,
  ...common,
});

export const clearLocationOpeningHours = defineOperation({
  operationId: 'clearLocationOpeningHours',
  method: 'delete',
  path: '/businesses/{business_id}/locations/{location_id}/opening-hours',
  summary: "Remove a location's own opening hours (it keeps to the business's)",
  params: locationPath,
  response: OpeningHoursResponse,
  ...common,
});
