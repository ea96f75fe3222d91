/**
 * Runs `task` every `everyMs`, never two runs at once (a run still going skips the tick). A failed
 * run is reported to `onFailure` and pauses the task for `pauseAfterFailureMs`: a task that fails
 * for a lasting reason (a missing privilege) is reported once per pause, not on every tick.
 */
export function every(
  everyMs: number,
  task: () => Promise<unknown>,
  onFailure: (err: unknown) => void,
  pauseAfterFailureMs = 0,
): { stop: () => void } {
  let running = false;
  let pausedUntil = 0;
  const timer = setInterval(() => {
    if (running || Date.now() < pausedUntil) return;
    running = true;
    task()
      .catch((err: unknown) => {
        pausedUntil = Date.now() + pauseAfterFailureMs;
        onFailure(err);
      })
      .finally(() => (running = false));
  }, everyMs);
  return { stop: () => clearInterval(timer) };
}
