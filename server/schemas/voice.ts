import { z } from 'zod';
import { idParam, timestampOut } from './common';

/** `GET /voice-calls/token`: a session needs nothing; an API key names the business and the staff member. */
export const DialerTokenQuery = z.object({
  business_id: idParam.optional().meta({ description: 'Required with an API key; a session uses its own business' }),
  staff_id: idParam.optional().meta({ description: 'Required with an API key; a session uses its own staff member' }),
});

export const DialerToken = z
  .object({
    token: z
      .string()
      .meta({ description: 'Twilio access token (JWT) with a Voice grant: outgoing through the TwiML app, incoming allowed' }),
    identity: z.string().meta({ description: '`staff-<staff_id>`', example: 'staff-12' }),
    expires_at: timestampOut.meta({ description: 'One hour after issue' }),
  })
  .meta({ id: 'DialerToken' });

/**
 * What the parties of a recorded call hear before they are connected (business setting
 * `recording_notice`, docs/providers.md#recording-notice), unless the business words its own.
 */
export const DEFAULT_RECORDING_NOTICE = 'This call may be recorded.';
export const MAX_RECORDING_NOTICE_LENGTH = 500;

/**
 * The step of a call that just ended, named in the action URL of the <Dial>/<Record> that ran it;
 * `notice` is the URL of a recorded browser call's <Number>: the callee hears the recording notice.
 */
const INSTRUCTION_STEPS = ['assigned', 'team', 'voicemail', 'outbound', 'notice'] as const;
export type InstructionStep = (typeof INSTRUCTION_STEPS)[number];

export const InstructionsQuery = z.object({
  step: z.enum(INSTRUCTION_STEPS).optional().meta({
    description:
      "Absent on a call's first request; set by our own action URLs (`assigned`/`team`: a ring ended; `voicemail`: the recording ended; `outbound`: a browser call's dial ended; `notice`: the callee of a recorded browser call answered and hears the recording notice before it is connected)",
  }),
});
