import { z } from 'zod';
import { id } from '@/server/schemas/common';
import { sendAt } from '@/server/schemas/messages';
import { AppError } from '@/server/errors';
import { MAX_SMS_LENGTH } from '@/server/shared/limits';
import { retryMessages } from '@/server/services/messages/requests';
import { editScheduledMessage } from '@/server/services/messages/schedule';
import { staffProcedure } from '../../init';
import { sendable } from './messages';

/**
 * Fixing a text from the timeline (docs/api.md#retry, docs/api.md#send-later): Retry of a failed
 * one, Edit of a scheduled one. Both over the services REST uses, acting as the session's staff.
 */
export const textProcedures = {
  /**
   * Retry: a new attempt of the same message (never a second message), through the REST retry's
   * conditional UPDATE, so two clicks or two staff members queue it once. What was not retried (a
   * concurrent retry got there first, it is no longer failed) is a CONFLICT saying why.
   */
  retryMessage: staffProcedure.input(z.object({ messageId: id })).mutation(async ({ ctx, input }) => {
    const result = await retryMessages(
      ctx.caller.businessId,
      { messageIds: [input.messageId] },
      { type: 'staff', staff_id: ctx.caller.staffId },
    );
    const skipped = result.skipped[0];
    if (skipped) throw new AppError('conflict', `Not retried: ${skipped.reason}`);
    return { message_id: input.messageId, message_status: 'queued' as const };
  }),
  /** Edit of a scheduled message: its words (texts only), its time, or both. */
  editScheduled: staffProcedure
    .input(
      z
        .object({
          messageId: id,
          message: sendable(z.string().trim().min(1).max(MAX_SMS_LENGTH)).optional(),
          send_at: sendAt.optional(),
        })
        .refine((v) => v.message !== undefined || v.send_at !== undefined, 'Give the new words, the new time, or both'),
    )
    .mutation(({ ctx, input }) =>
      editScheduledMessage(
        ctx.caller.businessId,
        input.messageId,
        { content: input.message, sendAt: input.send_at },
        { type: 'staff', staff_id: ctx.caller.staffId },
      ),
    ),
};
