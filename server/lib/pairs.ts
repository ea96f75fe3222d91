/**
 * name=value pairs → an object, a repeated name keeping every value. A Map while collecting, so a
 * name like `__proto__` is an ordinary key (Object.fromEntries defines own properties).
 */
export function groupPairs(pairs: Iterable<[string, string]>): Record<string, string | string[]> {
  const grouped = new Map<string, string | string[]>();
  for (const [key, value] of pairs) {
    const prev = grouped.get(key);
    if (prev === undefined) grouped.set(key, value);
    else if (Array.isArray(prev)) prev.push(value);
    else grouped.set(key, [prev, value]);
  }
  return Object.fromEntries(grouped);
}
