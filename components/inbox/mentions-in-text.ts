/**
 * Which chosen @mentions a note's text still holds (docs/api.md#mentions): the picker keeps the
 * staff id of each name it inserted, and the note is sent with those whose `@Name` is still in its
 * text. A name counts only as a whole (`@Sam` is not in `@Samantha`), and a longer name is read
 * first so a shorter one inside it does not count (`@Sam Stylist` does not mention "Sam").
 */

export type ChosenMention = { staffId: number; name: string };

/** A letter or digit right after a name would make it part of a longer word. */
const WORD_GOES_ON = /^[\p{L}\p{N}]/u;

export function mentionedIn(chosen: readonly ChosenMention[], text: string): number[] {
  let rest = text;
  const found = new Set<number>();
  for (const m of [...chosen].sort((a, b) => b.name.length - a.name.length)) {
    const token = `@${m.name}`;
    for (let at = rest.indexOf(token); at !== -1; at = rest.indexOf(token, at + 1)) {
      if (WORD_GOES_ON.test(rest.slice(at + token.length))) continue;
      found.add(m.staffId);
      // Blanked out: a shorter name within it is not a mention of its own.
      rest = rest.slice(0, at) + ' '.repeat(token.length) + rest.slice(at + token.length);
    }
  }
  return chosen.filter((m) => found.has(m.staffId)).map((m) => m.staffId);
}
