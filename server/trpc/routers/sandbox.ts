import { TRPCError } from '@trpc/server';
import { z } from 'zod';
import { id, MAX_PAGE } from '@/server/schemas/common';
import { MAX_SMS_LENGTH } from '@/server/shared/limits';
import { listSandboxClients, replyAsClient, sandboxEnabled, sandboxMailbox, sandboxPhone } from '@/server/services/sandbox/phone';
import { router, staffProcedure } from '../init';

/**
 * The /sandbox page (development only): the staff member's business's clients, each client's phone
 * and mailbox, and replies written as the client (posted as signed provider webhooks). Absent —
 * NOT_FOUND — unless the sandbox SMS and email providers are in use.
 */
const sandboxProcedure = staffProcedure.use(({ next }) => {
  if (!sandboxEnabled())
    throw new TRPCError({
      code: 'NOT_FOUND',
      message: 'The sandbox exists only while the sandbox SMS and email providers are in use',
    });
  return next();
});

const clientInput = z.object({ clientId: id });

export const sandboxRouter = router({
  clients: sandboxProcedure
    .input(
      z.object({
        search: z.string().trim().max(200).optional(),
        page: z.number().int().min(1).max(MAX_PAGE).default(1),
        pageSize: z.number().int().min(1).max(100).default(50),
      }),
    )
    .query(({ ctx, input }) => listSandboxClients(ctx.caller.businessId, input)),
  /** The client's phone: their SMS thread, newest last. */
  thread: sandboxProcedure.input(clientInput).query(({ ctx, input }) => sandboxPhone(ctx.caller.businessId, input.clientId)),
  /** The client's mailbox: their emails, newest first. */
  mailbox: sandboxProcedure.input(clientInput).query(({ ctx, input }) => sandboxMailbox(ctx.caller.businessId, input.clientId)),
  replySms: sandboxProcedure
    .input(clientInput.extend({ body: z.string().trim().min(1).max(MAX_SMS_LENGTH) }))
    .mutation(({ ctx, input }) =>
      replyAsClient(ctx.caller.businessId, { channel: 'sms', clientId: input.clientId, body: input.body }),
    ),
  replyEmail: sandboxProcedure
    .input(
      clientInput.extend({
        subject: z.string().trim().max(998).optional(),
        text: z.string().min(1).max(1_000_000),
        html: z.string().max(5_000_000).nullish(),
        attachment: z
          .object({
            filename: z.string().trim().min(1).max(255),
            contentType: z.string().trim().max(255),
            contentBase64: z
              .string()
              .regex(/^[A-Za-z0-9+/]*={0,2}$/, 'must be base64')
              .max(7_000_000),
          })
          .nullish(),
        replyToMessageId: id.optional(),
      }),
    )
    .mutation(({ ctx, input }) => replyAsClient(ctx.caller.businessId, { channel: 'email', ...input })),
});
