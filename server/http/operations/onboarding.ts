import { businessPath } from '@/server/schemas/common';
import { BusinessOnboardRequest, BusinessOnboardResponse, OnboardingStatusResponse } from '@/server/schemas/onboarding';
import { defineOperation } from '../operation';

export const onboardBusiness = defineOperation({
  operationId: 'onboardBusiness',
  method: 'post',
  path: '/business/onboard',
  tag: 'business',
  summary: 'Onboard a business',
  description:
    'Platform key only (a business key is 403). Creates or updates (by `external_id`) a business with its senders, locations, staff and clients, all upserted by `external_id` in one transaction: the same body twice creates and changes nothing. Omitted optional fields keep their stored values; `null` clears them. `api_key` is returned only when the business is created. Up to 1,000 clients are imported before the answer (`completed`, ids listed); more are validated at once and imported in the background (`in_progress`, `clients` empty: follow `GET /business/{business_id}/onboarding-status`, find ids with the clients list filtered by `external_id`). An unparsable phone number or a `location_external_id` naming no location is a 422 with its `loc`; an SMS number or sender address owned by another business is a 409.',
  auth: 'platform',
  body: BusinessOnboardRequest,
  response: BusinessOnboardResponse,
  errors: [401, 403, 409, 422],
});

export const getOnboardingStatus = defineOperation({
  operationId: 'getBusinessOnboardingStatus',
  method: 'get',
  path: '/business/{business_id}/onboarding-status',
  tag: 'business',
  summary: 'Get business onboarding status',
  description:
    'The status of the latest onboarding and its steps (`business`, `senders`, `locations`, `staff`, `clients`); the clients step counts `done` of `total` while a background import runs.',
  auth: 'api_key',
  params: businessPath,
  response: OnboardingStatusResponse,
  errors: [401, 403, 404],
});
