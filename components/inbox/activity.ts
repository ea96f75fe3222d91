/**
 * The timeline's two kinds of item (docs/architecture.md#event-log): messages, and activity lines
 * saying who assigned, resolved, snoozed, labeled or opted out. Pure, for the browser and its test.
 */
export type TimelineItem<M, A> = { kind: 'message'; at: string; item: M } | { kind: 'activity'; at: string; item: A };

/**
 * Messages (oldest first, in the server's order, which is kept as is) and activity lines (oldest
 * first), interleaved by time; a line that happened at the same instant as a message comes after it.
 */
export function interleave<M extends { sent_at: string }, A extends { occurred_at: string }>(
  messages: readonly M[],
  lines: readonly A[],
): TimelineItem<M, A>[] {
  const out: TimelineItem<M, A>[] = [];
  let l = 0;
  for (const m of messages) {
    const at = Date.parse(m.sent_at);
    while (l < lines.length && Date.parse(lines[l]!.occurred_at) < at) {
      out.push({ kind: 'activity', at: lines[l]!.occurred_at, item: lines[l]! });
      l++;
    }
    out.push({ kind: 'message', at: m.sent_at, item: m });
  }
  for (; l < lines.length; l++) out.push({ kind: 'activity', at: lines[l]!.occurred_at, item: lines[l]! });
  return out;
}

/**
 * From when the timeline asks for activity lines: the oldest message it has loaded while earlier
 * pages remain (their lines come with them), else from the beginning (null).
 */
export function activitySince(oldestLoaded: string | undefined, hasEarlier: boolean): string | null {
  return hasEarlier && oldestLoaded ? oldestLoaded : null;
}
