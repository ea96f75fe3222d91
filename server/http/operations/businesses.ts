import { z } from 'zod';
import { LocationResponse } from '@/server/schemas/businesses';
import { businessPath } from '@/server/schemas/common';
import { defineOperation } from '../operation';

export const listLocations = defineOperation({
  operationId: 'getBusinessLocations',
  method: 'get',
  path: '/businesses/{business_id}/locations',
  tag: 'businesses',
  summary: 'Get list of business locations',
  auth: 'any',
  params: businessPath,
  response: z.array(LocationResponse),
  errors: [403, 404],
});
