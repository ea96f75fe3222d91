import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { prettyFactory } from 'pino-pretty';

/**
 * `npm run dev`'s output for a person. The web server and the worker log as in production, one pino
 * JSON object a line (what a log collector reads, docs/configuration.md#logs); `npm run dev` reads
 * their output and prints each such line with pino-pretty (time, level, process, message, then any
 * other fields on the same line), and a request line as `GET /path 200 in 12 ms`. Anything else (Next.js's
 * own lines: compiling, errors) passes through unchanged.
 */
export function devLogFormatter({ colorize }: { colorize: boolean }): (line: string, processName?: string) => string {
  const pretty = prettyFactory({
    colorize,
    translateTime: 'SYS:HH:MM:ss',
    // pino-pretty would print a `hostname` (the web server's bind address, `*` in development) as `(web on *)`.
    ignore: 'pid,hostname',
    singleLine: true,
  });
  return (line, processName) => {
    const entry = pinoEntry(line);
    if (!entry) return line;
    // pino-pretty shows `name` beside the level: the process (web, worker) that wrote the line. A
    // line that does not say (the REST routes' logger, in Next's bundle) is named by its process.
    const { process: name, ...rest } = entry;
    const shownName = typeof name === 'string' ? name : processName;
    const shown: Record<string, unknown> = shownName ? { ...rest, name: shownName } : rest;
    if (isRequestLine(shown)) {
      const { method, path, status, ms, request_id: _requestId, ...others } = shown;
      return pretty({ ...others, msg: `${method} ${path} ${status} in ${ms} ms` }).replace(/\n$/, '');
    }
    return pretty(shown).replace(/\n$/, '');
  };
}

/**
 * Prints `input` (the stdout of the process `name`) line by line to `output`, each line through
 * `format`; resolves once `input` has ended and its last line is written.
 */
export function pipeLines(
  input: Readable,
  name: string,
  output: Writable,
  format: (line: string, processName?: string) => string,
): Promise<void> {
  const lines = createInterface({ input, crlfDelay: Infinity });
  lines.on('line', (line) => output.write(`${format(line, name)}\n`));
  return new Promise((resolve) => lines.once('close', resolve));
}

/** A line pino wrote: a JSON object with a numeric level and time; null for anything else. */
function pinoEntry(line: string): Record<string, unknown> | null {
  if (!line.startsWith('{')) return null;
  try {
    const parsed: unknown = JSON.parse(line);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return null;
    const entry = parsed as Record<string, unknown>;
    return typeof entry.level === 'number' && typeof entry.time === 'number' ? entry : null;
  } catch {
    return null;
  }
}

type RequestLine = { msg: 'request'; method: string; path: string; status: number; ms: number; request_id?: unknown };

function isRequestLine(entry: Record<string, unknown>): entry is Record<string, unknown> & RequestLine {
  return (
    entry.msg === 'request' &&
    typeof entry.method === 'string' &&
    typeof entry.path === 'string' &&
    typeof entry.status === 'number' &&
    typeof entry.ms === 'number'
  );
}
