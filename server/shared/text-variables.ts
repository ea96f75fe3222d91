/**
 * `{variable}` placeholders in the texts the service writes to clients from a business's own words
 * (the after-hours answer, appointment reminders): each text kind has its fixed list of variables,
 * refused at save time when a text names another, and replaced when the text is sent. Pure and
 * browser-safe: no imports. Saved replies, which staff fill in by hand, use `{{variable}}`
 * (templates.ts).
 */

/** `{name}` with a name of letters, digits, `_` or `.`; any other brace is plain text. Linear: no nested quantifiers. */
const PLACEHOLDER = /\{([A-Za-z0-9_.]{1,64})\}/g;

/** The placeholder names in a text, in order, as often as they appear. */
export const placeholderNames = (text: string): string[] => [...text.matchAll(PLACEHOLDER)].map((m) => m[1]!);

/** Placeholder names in a text that are none of `variables`, each once, in order. */
export function unknownPlaceholders(text: string, variables: readonly string[]): string[] {
  return [...new Set(placeholderNames(text).filter((name) => !variables.includes(name)))];
}

/**
 * The text with each variable (a key of `values`) replaced by its value, trimmed; or, when some
 * have no value (null), those variables, each once: a text is better not sent than sent with a
 * `{…}` in it. A name that is no variable stays as written (saving refused it; one left is plain text).
 */
export function fillPlaceholders<V extends string>(
  template: string,
  values: Readonly<Partial<Record<V, string | null>>>,
): { text: string } | { missing: V[] } {
  const missing = new Set<V>();
  const text = template.replace(PLACEHOLDER, (raw, name: string) => {
    if (!Object.hasOwn(values, name)) return raw;
    const value = values[name as V] ?? null;
    if (value === null) missing.add(name as V);
    return value ?? raw;
  });
  return missing.size ? { missing: [...missing] } : { text: text.trim() };
}
