/**
 * Small string checks that must stay linear on any input (they see request data). Each replaces a
 * regular expression that backtracked quadratically on a long run followed by a rejecting
 * character; `npm run lint` (eslint-plugin-regexp) keeps new patterns from doing the same.
 */

/** `s` without any trailing characters from `chars`, e.g. trimEnd('a.!!', '.!') → 'a'. */
export function trimEnd(s: string, chars: string): string {
  let end = s.length;
  while (end > 0 && chars.includes(s[end - 1]!)) end--;
  return s.slice(0, end);
}

/**
 * Base64 with any whitespace (MIME wraps lines). Whitespace goes first, so the pattern is a single
 * run and an anchored tail; one pattern allowing whitespace both inside and after the padding
 * backtracked quadratically on a long run of spaces before a bad character.
 */
export function isBase64(content: string): boolean {
  return /^[A-Za-z0-9+/]*={0,2}$/.test(content.replace(/\s+/g, ''));
}

/** `s` on one line: every run of whitespace one space, none at the ends. */
export const oneLine = (s: string | null | undefined): string => (s ?? '').replace(/\s+/g, ' ').trim();

/** `s` cut to at most `max` characters, an ellipsis ending what was cut. */
export const cut = (s: string, max: number): string => (s.length <= max ? s : `${s.slice(0, max - 1)}…`);
