import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { devLogFormatter, pipeLines } from './dev-logs';

/** `npm run dev`'s output (server/cli/dev-logs.ts): pino's JSON lines for a person, anything else as it was. */
const format = devLogFormatter({ colorize: false });
const at = new Date(2026, 0, 5, 9, 4, 7).getTime();
const pinoLine = (fields: Record<string, unknown>) => JSON.stringify({ level: 30, time: at, pid: 4242, ...fields });

describe('npm run dev log lines', () => {
  it('prints a request as one short line: time, level, process, method, path, status, duration', () => {
    const line = pinoLine({
      request_id: 'r-1',
      method: 'GET',
      path: '/api/v1/businesses/1/locations',
      status: 200,
      ms: 19,
      msg: 'request',
    });
    expect(format(line, 'web')).toBe('[09:04:07] INFO (web): GET /api/v1/businesses/1/locations 200 in 19 ms');
  });

  it('prints any other line with its fields on the same line, named by the process that wrote it', () => {
    const warn = JSON.stringify({ level: 40, time: at, pid: 1, process: 'worker', message_ids: [7], msg: 'messages in flight' });
    expect(format(warn, 'worker')).toBe('[09:04:07] WARN (worker): messages in flight {"message_ids":[7]}');
    // A line that names no process (the REST routes' logger inside Next.js's bundle) gets its process's name.
    expect(format(pinoLine({ msg: 'database unavailable' }), 'web')).toBe('[09:04:07] INFO (web): database unavailable');
  });

  it('passes anything that is not a pino line through unchanged: Next.js output, other JSON, broken JSON', () => {
    for (const line of ['○ Compiling /inbox ...', ' ✓ Ready in 1.2s', '{"hello":"world"}', '{"level":30', '', '[1,2]']) {
      expect(format(line, 'web')).toBe(line);
    }
  });

  it('writes no colour codes when told not to, and one output line per input line', async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    let printed = '';
    output.on('data', (d: Buffer) => (printed += d.toString()));
    const done = pipeLines(input, 'web', output, format);
    input.write(`${pinoLine({ msg: 'web server ready', port: 3000 })}\n○ Compiling /inbox ...\n`);
    input.end(pinoLine({ method: 'POST', path: '/api/trpc/inbox.send', status: 200, ms: 3, msg: 'request' }));
    await done;
    expect(printed.split('\n')).toEqual([
      '[09:04:07] INFO (web): web server ready {"port":3000}',
      '○ Compiling /inbox ...',
      '[09:04:07] INFO (web): POST /api/trpc/inbox.send 200 in 3 ms',
      '',
    ]);
    expect(printed).not.toContain('\u001b[');
  });
});
