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
  let waiting: { resolve: (status: number) => void; reject: (err: Error) => void } | null = null;

  // The answer is read as it streams in, in one pass: only an unfinished head or chunk-size line is
  // kept between packets; a body's bytes are counted off (`skip`) and dropped, never gathered.
  let readingHead = true;
  let status = 0;
  let skip = 0;
  /** The bytes being skipped are the answer's last (a sized body, or the final chunk's CRLF). */
  let lastPart = false;
  let partialLine: Buffer = Buffer.alloc(0);

  const answered = () => {
    readingHead = true;
    lastPart = false;
    const w = waiting;
    waiting = null;
    w?.resolve(status);
  };
  const read = (chunk: Buffer) => {
    const data = partialLine.length ? Buffer.concat([partialLine, chunk]) : chunk;
    partialLine = Buffer.alloc(0);
    let at = 0;
    while (at < data.length) {
      if (skip > 0) {
        const n = Math.min(skip, data.length - at);
        skip -= n;
        at += n;
        if (skip === 0 && lastPart) answered();
        continue;
      }
      const end = data.indexOf(readingHead ? '\r\n\r\n' : '\r\n', at);
      if (end < 0) {
        partialLine = data.subarray(at);
        return;
      }
      if (readingHead) {
        const head = data.toString('latin1', at, end);
        at = end + 4;
        status = Number(head.slice(9, 12));
        readingHead = false;
        // Chunked: size lines follow. Otherwise the body is Content-Length bytes (none without it).
        if (!/\r\ntransfer-encoding: *chunked/i.test(head)) {
          skip = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
          lastPart = true;
          if (skip === 0) answered();
        }
      } else {
        const size = parseInt(data.toString('latin1', at, end), 16);
        at = end + 2;
        skip = size + 2; // the chunk and its CRLF; the last (size 0) is that CRLF alone
        lastPart = size === 0;
      }
    }
  };

  const fail = (err: Error) => {
    const w = waiting;
    waiting = null;
    w?.reject(err);
  };
  socket.on('data', read);
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
