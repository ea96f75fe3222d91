import { z } from 'zod';
import { isoTimestamp } from '@/server/schemas/common';
import { conversationActivity } from '@/server/services/activity/read';
import { conversationProcedure } from './shared';

/** The timeline's activity lines: who assigned, resolved, snoozed, labeled, opted out (docs/architecture.md#event-log). */
export const activityProcedures = {
  /**
   * The open conversation's lines from `since` on (the oldest message the timeline has loaded;
   * null: all), newest first, and whether more are about to be written (`behind`).
   */
  activity: conversationProcedure
    .input(z.object({ since: isoTimestamp.nullable().default(null) }))
    .query(({ ctx, input }) => conversationActivity(ctx.conversation, input.since)),
};
