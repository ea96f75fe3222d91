/**
 * Waits, if needed, so the next `seconds` fall inside one rate-limit window (a minute of the
 * clock, server/web/rate-limit.ts): a test that counts requests must not see the count reset.
 */
export async function withinOneWindow(seconds = 15): Promise<void> {
  const second = new Date().getSeconds();
  if (second > 59 - seconds) await new Promise((r) => setTimeout(r, (61 - second) * 1000));
}
