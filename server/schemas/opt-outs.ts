import { z } from 'zod';
import { OPT_IN_SOURCES, OPT_OUT_ACTIONS, OPT_OUT_CHANNELS, OPT_OUT_EVENT_SOURCES } from '@/db/schema/enums';
import { MAX_OPT_OUT_NOTE_LENGTH } from '@/server/shared/limits';
import { actingStaffId } from './acting-staff';
import { timestampOut } from './common';

/** Opt-outs and their history (docs/api.md#opt-out): the request and response shapes of REST and tRPC. */

export const OptInSource = z.enum(OPT_IN_SOURCES).meta({
  id: 'OptInSource',
  description: 'How the client asked to get this channel again',
});

/** What an explicit opt-in states (docs/api.md#opt-out): how the client asked, in which words. */
export const optInStatement = {
  source: OptInSource.optional().meta({
    description:
      'How the client asked to get this channel again. Required, with `note`, to lift an opt-out the client made (docs: Opt-out)',
  }),
  note: z.string().trim().max(MAX_OPT_OUT_NOTE_LENGTH).optional().meta({
    description: 'The client’s words or the circumstances (who took the request, where). Required with `source`',
  }),
};

/** DELETE …/opt-outs/{channel}: the opt-in, with what the client asked (an empty body is fine for an opt-out set by hand). */
export const OptInRequest = z
  .object({
    ...optInStatement,
    staff_id: actingStaffId,
  })
  .meta({ id: 'OptInRequest' });
export type OptInRequest = z.output<typeof OptInRequest>;

export const OptOutRecord = z
  .object({
    event_id: z.number().int(),
    channel: z.enum(OPT_OUT_CHANNELS),
    address: z.string().meta({ description: 'The phone number (E.164) or email address (lower case)' }),
    action: z.enum(OPT_OUT_ACTIONS),
    source: z.enum(OPT_OUT_EVENT_SOURCES).meta({
      description:
        'An opt-out: `keyword`, `provider_error`, `staff`, `api`, `import`, `migrated`. An opt-in: `keyword` (START, UNSTOP or YES from the number), how the client asked (`in_person`, `phone_call`, `paper_form`, `web_form`, `email`, `text_message`), or `staff` / `api` lifting an opt-out set by hand',
    }),
    note: z.string().nullable(),
    staff_id: z
      .number()
      .int()
      .nullable()
      .meta({ description: 'The staff member who did it; null: the API, the client or the provider' }),
    message_id: z
      .number()
      .int()
      .nullable()
      .meta({ description: 'The message that caused it (STOP, START, a refused send), while it exists' }),
    created_at: timestampOut,
  })
  .meta({ id: 'OptOutRecord' });
export type OptOutRecord = z.output<typeof OptOutRecord>;

export const ClientOptOutHistory = z
  .object({
    client_id: z.number().int(),
    opted_out_sms: z.boolean(),
    opted_out_email: z.boolean(),
    history: z.array(OptOutRecord).meta({
      description: "Opt-outs and opt-ins of the client's current phone number and email address, newest first (up to 200)",
    }),
  })
  .meta({ id: 'ClientOptOutHistory' });
export type ClientOptOutHistory = z.output<typeof ClientOptOutHistory>;
