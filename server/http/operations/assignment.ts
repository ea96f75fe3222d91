import { businessPath } from '@/server/schemas/common';
import { AssignmentSettings, BusinessAssignmentInput, LocationAssignmentInput } from '@/server/schemas/assignment';
import { locationPath } from '@/server/schemas/sending-windows';
import { defineOperation } from '../operation';

const description =
  'Auto-assignment (docs: Auto-assignment): a client’s conversation waiting for a reply is given to an available staff member of its location with room, by the location’s policy, else the business’s (default `off`).';
const common = { tag: 'businesses', auth: 'any' as const, description, response: AssignmentSettings, errors: [403, 404] };

export const getAssignmentSettings = defineOperation({
  ...common,
  operationId: 'getAssignmentSettings',
  method: 'get',
  path: '/businesses/{business_id}/assignment',
  summary: "The business's auto-assignment settings and each location's policy",
  params: businessPath,
});

export const setBusinessAssignment = defineOperation({
  ...common,
  operationId: 'setBusinessAssignment',
  method: 'put',
  path: '/businesses/{business_id}/assignment',
  summary: "Set the business's auto-assignment policy, capacity and hand-back",
  params: businessPath,
  body: BusinessAssignmentInput,
});

export const setLocationAssignment = defineOperation({
  ...common,
  operationId: 'setLocationAssignment',
  method: 'put',
  path: '/businesses/{business_id}/locations/{location_id}/assignment',
  summary: "Set a location's own auto-assignment policy (null: the business's)",
  params: locationPath,
  body: LocationAssignmentInput,
});
