/**
 * Runs `step` again and again while it reports more work, then waits for a `wake()` (a NOTIFY, a
 * finished request) or `idleMs`, whichever comes first: work that arrives is picked up at once, and
 * an idle loop costs one run per `idleMs`. A failed step is reported and retried after `idleMs`.
 * `stop()` resolves once the step running (if any) has finished.
 */
export function wakeableLoop(
  step: () => Promise<boolean>,
  idleMs: number,
  onFailure: (err: unknown) => void,
): { wake: () => void; stop: () => Promise<void> } {
  let stopping = false;
  let woken = false;
  let sleeper: (() => void) | null = null;
  const wake = () => {
    woken = true;
    sleeper?.();
  };
  const done = (async () => {
    while (!stopping) {
      woken = false;
      let more = false;
      try {
        more = await step();
      } catch (err) {
        onFailure(err);
      }
      if (more || woken || stopping) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, idleMs);
        sleeper = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      sleeper = null;
    }
  })();
  return {
    wake,
    async stop() {
      stopping = true;
      sleeper?.();
      await done;
    },
  };
}
