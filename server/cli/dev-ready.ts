import { waitForOk } from './child-process';

/**
 * `npm run dev`'s welcome (the login link among it) once the web server answers `healthUrl`: printed
 * earlier, a click on the link at once is refused while the server is still starting. If it does not
 * answer in time (or the web process died: `alive`), the welcome is printed anyway, after why.
 */
export async function printWhenReady(
  healthUrl: string,
  welcome: () => string[],
  options: { alive: () => boolean; timeoutMs?: number; print?: (text: string) => void; warn?: (text: string) => void },
): Promise<boolean> {
  const print = options.print ?? ((text) => console.log(text));
  const warn = options.warn ?? ((text) => console.error(text));
  let ready = true;
  try {
    await waitForOk(healthUrl, { timeoutMs: options.timeoutMs ?? 120_000, alive: options.alive, what: 'the web server' });
  } catch (err) {
    ready = false;
    warn(`${(err as Error).message}: the link below may not work yet.`);
  }
  print(welcome().join('\n'));
  return ready;
}
