import { z } from 'zod';
import { LocationResponse } from '@/server/schemas/businesses';
import { businessPath } from '@/server/schemas/common';
import { locationPath, SendingWindowInput, SendingWindowSettings } from '@/server/schemas/sending-windows';
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

const sendingWindowDocs =
  "Quiet hours (docs: Quiet hours): campaign, reminder, transactional, marketing and review-request texts queued outside the recipient's sending window are scheduled for its next opening. The window is the client's location's own, else the business's (default 08:00–21:00); the clock is the recipient's.";

export const getSendingWindows = defineOperation({
  operationId: 'getSendingWindows',
  method: 'get',
  path: '/businesses/{business_id}/sending-window',
  tag: 'businesses',
  summary: "The business's and its locations' sending windows, with the presets",
  description: sendingWindowDocs,
  auth: 'any',
  params: businessPath,
  response: SendingWindowSettings,
  errors: [403, 404],
});

export const setBusinessSendingWindow = defineOperation({
  operationId: 'setBusinessSendingWindow',
  method: 'put',
  path: '/businesses/{business_id}/sending-window',
  tag: 'businesses',
  summary: "Set the business's sending window",
  description: sendingWindowDocs,
  auth: 'any',
  params: businessPath,
  body: SendingWindowInput,
  response: SendingWindowSettings,
  errors: [403, 404],
});

export const setLocationSendingWindow = defineOperation({
  operationId: 'setLocationSendingWindow',
  method: 'put',
  path: '/businesses/{business_id}/locations/{location_id}/sending-window',
  tag: 'businesses',
  summary: "Set a location's own sending window",
  description: `${sendingWindowDocs} A location's own window applies to its clients instead of the business's.`,
  auth: 'any',
  params: locationPath,
  body: SendingWindowInput,
  response: SendingWindowSettings,
  errors: [403, 404],
});

export const clearLocationSendingWindow = defineOperation({
  operationId: 'clearLocationSendingWindow',
  method: 'delete',
  path: '/businesses/{business_id}/locations/{location_id}/sending-window',
  tag: 'businesses',
  summary: "Remove a location's own sending window (it keeps to the business's)",
  auth: 'any',
  params: locationPath,
  response: SendingWindowSettings,
  errors: [403, 404],
});
