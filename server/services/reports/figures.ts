/**
 * Reports' definitions, implemented once (docs/api.md#reports, Definitions): what a conversation's
 * history counts as cycles, reply times and missed calls. Pure: the handler and the recount of old
 * history (./recount.ts) read a conversation's messages and resolutions, and hand them here in order.
 *
 * - A **client message** is an inbound text or email (the client's side of waiting.ts's definition).
 *   Calls are not: a missed call or a voicemail has its own figures (below), an answered call is a
 *   conversation in itself.
 * - A **reply** is an outbound text or email a person wrote to go now (waiting.ts: not a note, not
 *   what the system sends — automatic answers, reminders, campaigns —, not a scheduled message).
 * - A **cycle** starts at a client message while no cycle is open, and ends at the first resolution
 *   after it. A reply before any client message (a conversation we opened) starts nothing: the clock
 *   starts at the client's first answer. A resolution with no cycle open ends nothing.
 * - **First response time**: the cycle's start → its first reply. **Reply time**: the client's
 *   first unanswered message of the cycle → the next reply (the first of them is the first response).
 *   A cycle resolved while the client waits drops that wait: nobody replied. **Resolution time**:
 *   the cycle's start → its resolution.
 * - A **missed call** (an inbound call with a `call_outcome`: missed, or a voicemail left) is
 *   **answered** by the next outbound call placed by staff (called back, whatever its outcome) or
 *   the next reply, whichever comes first; every missed call still unanswered then is answered by it.
 * - Equal times: messages before a resolution, then by id (a resolution and a message of one
 *   millisecond are read as the message first).
 */

export type HistoryItem =
  | { kind: 'client'; at: number; messageId: number; channel: 'sms' | 'email' }
  | { kind: 'reply'; at: number; messageId: number; channel: 'sms' | 'email'; staffId: number | null }
  | { kind: 'resolved'; at: number; staffId: number | null; order: number }
  | { kind: 'missed_call'; at: number; messageId: number; outcome: 'missed' | 'voicemail' }
  | { kind: 'call_out'; at: number; messageId: number; staffId: number | null };

/** Seconds of [from, to) the location is open (its opening clock's businessSeconds). */
export type BusinessSeconds = (from: Date, to: Date) => number;

export type ReplyFigure = {
  channel: 'sms' | 'email';
  waitingMessageId: number;
  waitingSince: number;
  replyMessageId: number;
  repliedAt: number;
  staffId: number | null;
  seconds: number;
  businessSeconds: number;
};

/** The client's message waiting for a reply. */
export type Waiting = { messageId: number; at: number; channel: 'sms' | 'email' };

export type CycleFigure = {
  channel: 'sms' | 'email';
  startMessageId: number;
  startedAt: number;
  clientMessages: number;
  /** Every reply time of the cycle, those counted before a resume included. */
  replyCount: number;
  /** The reply times counted by this call (all of them, unless it resumed the cycle). */
  replies: ReplyFigure[];
  /** Whether the cycle has its first reply (`firstReply` is null when it came before a resume). */
  answered: boolean;
  firstReply: ReplyFigure | null;
  resolvedAt: number | null;
  resolvedByStaffId: number | null;
  resolutionSeconds: number | null;
  resolutionBusinessSeconds: number | null;
  /** Where a later count resumes an open cycle: its last client message or reply, and who waits then. */
  lastMessage: { at: number; id: number };
  waiting: Waiting | null;
};

/** An open cycle as counted so far: cyclesOf goes on from its last message (the recount's resume). */
export type OpenCycle = Pick<
  CycleFigure,
  'channel' | 'startMessageId' | 'startedAt' | 'clientMessages' | 'replyCount' | 'answered' | 'lastMessage' | 'waiting'
>;

export type MissedCallFigure = {
  callMessageId: number;
  calledAt: number;
  outcome: 'missed' | 'voicemail';
  answeredMessageId: number | null;
  answeredAt: number | null;
  answeredBy: 'call' | 'sms' | 'email' | null;
  answeredStaffId: number | null;
  seconds: number | null;
  businessSeconds: number | null;
};

const rank = (i: HistoryItem) => (i.kind === 'resolved' ? 1 : 0);
const tiebreak = (i: HistoryItem) => (i.kind === 'resolved' ? i.order : i.messageId);

/** The history in the order the definitions read it. */
export function inOrder(items: readonly HistoryItem[]): HistoryItem[] {
  return [...items].sort((a, b) => a.at - b.at || rank(a) - rank(b) || tiebreak(a) - tiebreak(b));
}

const span = (from: number, to: number, business: BusinessSeconds) => ({
  seconds: (to - from) / 1000,
  businessSeconds: business(new Date(from), new Date(to)),
});

/**
 * The cycles of a history that starts with no cycle open (a conversation's beginning, or just after
 * a resolution), or with `open` open: then `items` are what came after its last message, and the
 * first cycle answered is `open` gone on. The last cycle may still be open (`resolvedAt` null).
 */
export function cyclesOf(items: readonly HistoryItem[], business: BusinessSeconds, open?: OpenCycle): CycleFigure[] {
  const cycles: CycleFigure[] = [];
  let current: CycleFigure | null = open
    ? {
        ...open,
        replies: [],
        firstReply: null,
        resolvedAt: null,
        resolvedByStaffId: null,
        resolutionSeconds: null,
        resolutionBusinessSeconds: null,
      }
    : null;
  if (current) cycles.push(current);
  for (const item of inOrder(items)) {
    if (item.kind === 'client') {
      if (!current) {
        current = {
          channel: item.channel,
          startMessageId: item.messageId,
          startedAt: item.at,
          clientMessages: 0,
          replyCount: 0,
          replies: [],
          answered: false,
          firstReply: null,
          resolvedAt: null,
          resolvedByStaffId: null,
          resolutionSeconds: null,
          resolutionBusinessSeconds: null,
          lastMessage: { at: item.at, id: item.messageId },
          waiting: null,
        };
        cycles.push(current);
      }
      current.clientMessages++;
      current.waiting ??= { messageId: item.messageId, at: item.at, channel: item.channel };
      current.lastMessage = { at: item.at, id: item.messageId };
    } else if (item.kind === 'reply') {
      if (!current) continue;
      current.lastMessage = { at: item.at, id: item.messageId };
      const waiting = current.waiting;
      if (!waiting) continue;
      const reply: ReplyFigure = {
        channel: waiting.channel,
        waitingMessageId: waiting.messageId,
        waitingSince: waiting.at,
        replyMessageId: item.messageId,
        repliedAt: item.at,
        staffId: item.staffId,
        ...span(waiting.at, item.at, business),
      };
      current.replies.push(reply);
      current.replyCount++;
      if (!current.answered) {
        current.answered = true;
        current.firstReply = reply;
      }
      current.waiting = null;
    } else if (item.kind === 'resolved') {
      if (!current) continue;
      const s = span(current.startedAt, item.at, business);
      current.resolvedAt = item.at;
      current.resolvedByStaffId = item.staffId;
      current.resolutionSeconds = s.seconds;
      current.resolutionBusinessSeconds = s.businessSeconds;
      current.waiting = null;
      current = null;
    }
  }
  return cycles;
}

/** The missed calls of a history and how each was answered (a history starting at or before the first of them). */
export function missedCallsOf(items: readonly HistoryItem[], business: BusinessSeconds): MissedCallFigure[] {
  const calls: MissedCallFigure[] = [];
  let unanswered: MissedCallFigure[] = [];
  for (const item of inOrder(items)) {
    if (item.kind === 'missed_call') {
      const call: MissedCallFigure = {
        callMessageId: item.messageId,
        calledAt: item.at,
        outcome: item.outcome,
        answeredMessageId: null,
        answeredAt: null,
        answeredBy: null,
        answeredStaffId: null,
        seconds: null,
        businessSeconds: null,
      };
      calls.push(call);
      unanswered.push(call);
    } else if (item.kind === 'reply' || item.kind === 'call_out') {
      for (const call of unanswered) {
        const s = span(call.calledAt, item.at, business);
        call.answeredMessageId = item.messageId;
        call.answeredAt = item.at;
        call.answeredBy = item.kind === 'call_out' ? 'call' : item.channel;
        call.answeredStaffId = item.staffId;
        call.seconds = s.seconds;
        call.businessSeconds = s.businessSeconds;
      }
      unanswered = [];
    }
  }
  return calls;
}
