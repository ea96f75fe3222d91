/**
 * PostgreSQL `text` and `jsonb` cannot hold U+0000, and a lone UTF-16 surrogate has no UTF-8 form
 * to store: either fails the statement that meets it. REST refuses such input with a 422
 * (server/web/storable-text.ts); a signed webhook cannot be refused for it (the provider would
 * retry forever), so its parsed fields are cleaned with these before they reach the database, and
 * the exact bytes are kept beside them (webhook_events.raw_body).
 */
export function isStorableText(s: string): boolean {
  return s.isWellFormed() && !s.includes('\u0000');
}

/** U+0000 and lone surrogates become U+FFFD, the replacement character; anything else is kept. */
function cleanText(s: string): string {
  return isStorableText(s) ? s : s.toWellFormed().replaceAll('\u0000', '\ufffd');
}

/** How deep cleanJson follows nested arrays and objects; a provider's payloads are a few levels deep. */
const MAX_CLEAN_DEPTH = 32;

/**
 * Cleans every string and key of a parsed JSON value in place, iteratively (a hostile depth cannot
 * overflow the stack). `changed`: something was replaced; `tooDeep`: the value nests past
 * MAX_CLEAN_DEPTH, so it cannot be stored as it is (JSON.stringify itself recurses).
 */
export function cleanJson(root: unknown): { changed: boolean; tooDeep: boolean } {
  let changed = false;
  let tooDeep = false;
  const stack: { value: unknown; depth: number }[] = [{ value: root, depth: 0 }];
  while (stack.length > 0) {
    const { value, depth } = stack.pop()!;
    if (value === null || typeof value !== 'object') continue;
    if (depth >= MAX_CLEAN_DEPTH) {
      tooDeep = true;
      continue;
    }
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        const item: unknown = value[i];
        if (typeof item === 'string' && !isStorableText(item)) {
          value[i] = cleanText(item);
          changed = true;
        } else stack.push({ value: item, depth: depth + 1 });
      }
      continue;
    }
    const record = value as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      let item = record[key];
      if (typeof item === 'string' && !isStorableText(item)) {
        item = record[key] = cleanText(item);
        changed = true;
      }
      if (!isStorableText(key)) {
        delete record[key];
        record[cleanText(key)] = item;
        changed = true;
      }
      stack.push({ value: item, depth: depth + 1 });
    }
  }
  return { changed, tooDeep };
}

/** `\`, `%` and `_` in a search term are literal: escaped for LIKE/ILIKE (whose escape character is `\`). */
export function escapeLike(term: string): string {
  return term.replace(/[\\%_]/g, (c) => `\\${c}`);
}
