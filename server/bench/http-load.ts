import net from 'node:net';

/**
 * The load generator of bench:inbox's concurrent phases: keep-alive HTTP/1.1 connections that send
 * one GET at a time and read just enough of each answer to find its status and its end.
 *
 * Why not node:http: the load generator shares the 2 cores with the server and PostgreSQL, and its
 * CPU is not spread evenly over what it measures. node:http's client cost ~120–150 µs of CPU per
 * request (a ClientRequest, an IncomingMessage, every header parsed); this one ~70. The bare route
 * handler does not notice (the web thread is its bound, and the machine a third idle), but a
 * workload that also runs PostgreSQL does: the more of the second core the generator takes, the
 * more often a woken backend runs on the web thread's core instead (measured with the same server:
 * the mix at 41–44% of the bare handler with node:http, 49% with this client).
 */
export type LoadConnection = { get: (path: string) => Promise<number>; close: () => void };

export function loadConnection(base: string, headers: Record<string, string>): LoadConnection {
  const url = new URL(base);
  const socket = net.connect(Number(url.port), url.hostname);
  socket.setNoDelay(true);
  const head = Object.entries({ host: url.host, ...headers })
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  let buffered: Buffer = Buffer.alloc(0);
  let waiting: { resolve: (status: number) => void; reject: (err: Error) => void } | null = null;

  /** One whole answer at the front of the buffer → its status (and the buffer moves past it); else null. */
  const takeAnswer = (): number | null => {
    const headEnd = buffered.indexOf('\r\n\r\n');
    if (headEnd < 0) return null;
    const headers = buffered.toString('latin1', 0, headEnd);
    const status = Number(headers.slice(9, 12));
    let end = headEnd + 4;
    const length = /\r\ncontent-length: *(\d+)/i.exec(headers);
    if (length) {
      end += Number(length[1]);
      if (buffered.length < end) return null;
    } else if (/\r\ntransfer-encoding: *chunked/i.test(headers)) {
      for (;;) {
        const lineEnd = buffered.indexOf('\r\n', end);
        if (lineEnd < 0) return null;
        const size = parseInt(buffered.toString('latin1', end, lineEnd), 16);
        end = lineEnd + 2 + size + 2;
        if (buffered.length < end) return null;
        if (size === 0) break;
      }
    }
    buffered = buffered.subarray(end);
    return status;
  };

  const fail = (err: Error) => {
    const w = waiting;
    waiting = null;
    w?.reject(err);
  };
  socket.on('data', (chunk: Buffer) => {
    buffered = buffered.length ? Buffer.concat([buffered, chunk]) : chunk;
    if (!waiting) return;
    const status = takeAnswer();
    if (status === null) return;
    const w = waiting;
    waiting = null;
    w.resolve(status);
  });
  socket.on('error', fail);
  socket.on('close', () => fail(new Error('connection closed by the server')));

  return {
    get: (path) =>
      new Promise<number>((resolve, reject) => {
        waiting = { resolve, reject };
        socket.write(`GET ${path} HTTP/1.1\r\n${head}\r\n`);
      }),
    close: () => {
      socket.removeAllListeners('close');
      socket.destroy();
    },
  };
}
