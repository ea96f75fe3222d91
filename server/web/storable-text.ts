import { AppError, type ErrorLocation, type ValidationIssue } from '@/server/errors';
import { isStorableText } from '@/server/lib/pg-text';

/*
 * Text PostgreSQL cannot store (server/lib/pg-text.ts) would fail deep inside a statement as a
 * 500. REST input is checked here, once, before validation: every string and object key of the
 * path, the query and the JSON body, so each such value is a 422 naming its field.
 */

/** How deep a JSON body may nest; no operation's schema goes past 6 levels. */
const MAX_JSON_DEPTH = 32;
const MAX_ISSUES = 20;

const UNSTORABLE = 'must not contain U+0000 or unpaired UTF-16 surrogates';

/** Throws a 422 listing (up to 20 of) the values under `where` that PostgreSQL cannot store. */
export function assertStorableText(where: ErrorLocation[0], value: unknown): void {
  const issues: ValidationIssue[] = [];
  // Iterative, so a hostile depth cannot overflow the stack; linear in the size of the value.
  const stack: { value: unknown; path: (string | number)[] }[] = [{ value, path: [] }];
  while (stack.length > 0 && issues.length < MAX_ISSUES) {
    const { value: v, path } = stack.pop()!;
    if (typeof v === 'string') {
      if (!isStorableText(v)) issues.push({ loc: [where, ...path] as ErrorLocation, msg: UNSTORABLE, type: 'string_unstorable' });
      continue;
    }
    if (v === null || typeof v !== 'object') continue;
    if (path.length >= MAX_JSON_DEPTH) {
      issues.push({
        loc: [where, ...path] as ErrorLocation,
        msg: `must not nest deeper than ${MAX_JSON_DEPTH} levels`,
        type: 'too_deep',
      });
      continue;
    }
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ value: v[i], path: [...path, i] });
      continue;
    }
    for (const key of Object.keys(v)) {
      if (!isStorableText(key))
        issues.push({ loc: [where, ...path, key] as ErrorLocation, msg: UNSTORABLE, type: 'string_unstorable' });
      stack.push({ value: (v as Record<string, unknown>)[key], path: [...path, key] });
    }
  }
  if (issues.length > 0) throw new AppError('validation', 'Validation error', { issues: issues.slice(0, MAX_ISSUES) });
}
