import type { ConversationPresence } from '@/server/shared/presence';

type Staff = ConversationPresence['staff'];

/** A colleague as the presence line names them: their first name ("Ana"), or "A colleague" before the staff list has them. */
export const firstName = (name: string | undefined): string => name?.trim().split(/\s+/)[0] || 'A colleague';

/** "Ana", "Ana and Ben", "Ana, Ben and Cy". */
function names(list: string[]): string {
  return list.length <= 1 ? (list[0] ?? '') : `${list.slice(0, -1).join(', ')} and ${list.at(-1)}`;
}

/**
 * Who is typing on a conversation, in words: "Ana is replying…", "Ana and Ben are replying… · Cy is
 * writing a note…"; empty when nobody types.
 */
export function typingLine(staff: Staff, nameOf: (staffId: number) => string | undefined): string {
  const parts: string[] = [];
  for (const [state, doing] of [
    ['replying', 'replying…'],
    ['noting', 'writing a note…'],
  ] as const) {
    const who = staff.filter((s) => s.state === state).map((s) => firstName(nameOf(s.staffId)));
    if (who.length) parts.push(`${names(who)} ${who.length === 1 ? 'is' : 'are'} ${doing}`);
  }
  return parts.join(' · ');
}

/** The tooltip of a colleague's avatar: "Ana Lopez is viewing", "… is replying", "… is writing a note". */
export function presenceTitle(name: string | undefined, state: Staff[number]['state']): string {
  const doing = state === 'replying' ? 'is replying' : state === 'noting' ? 'is writing a note' : 'is viewing';
  return `${name ?? 'A colleague'} ${doing}`;
}
