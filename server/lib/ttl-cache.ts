/** How long a TtlCache keeps an answer. */
export const TTL_CACHE_MS = 10_000;
const TTL_CACHE_MAX = 10_000;

/**
 * Per-process memory of a lookup's positive answers, each kept TTL_CACHE_MS (so a change in the
 * database is seen at most that long after). Bounded: past TTL_CACHE_MAX entries the oldest go first.
 */
export class TtlCache<V> {
  private readonly entries = new Map<string, { value: V; until: number }>();
  get(key: string): V | undefined {
    const hit = this.entries.get(key);
    if (!hit) return undefined;
    if (hit.until > Date.now()) return hit.value;
    this.entries.delete(key);
    return undefined;
  }
  set(key: string, value: V): void {
    if (this.entries.size >= TTL_CACHE_MAX) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, { value, until: Date.now() + TTL_CACHE_MS });
  }
}
