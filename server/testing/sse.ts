import http from 'node:http';

/**
 * Splits a decoded `text/event-stream` body into its messages, the way EventSource does for the
 * fields the event streams use: feed it the body's chunks as they come; each complete message
 * (ended by a blank line) is handed to `onMessage` with its `event:` type ('message' when none),
 * its `data:` lines joined and its `id:` (the event's id in the log), if it has one.
 */
export function sseParser(onMessage: (event: string, data: string, id?: string) => void): (chunk: string) => void {
  let buffer = '';
  return (chunk) => {
    buffer += chunk;
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const message = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let event = 'message';
      let data = '';
      let id: string | undefined;
      for (const line of message.split('\n')) {
        if (line.startsWith('event: ')) event = line.slice(7);
        else if (line.startsWith('data: ')) data += line.slice(6);
        else if (line.startsWith('id: ')) id = line.slice(4);
      }
      onMessage(event, data, id);
    }
  };
}

/**
 * Opens the inbox event stream at `url` as a signed-in browser would (session cookie, accepting
 * `text/event-stream`, a connection of its own), with any `headers` added; `onResponse` gets the answer.
 */
export function requestEventStream(
  url: URL,
  sessionCookie: string,
  headers: Record<string, string>,
  onResponse: (res: http.IncomingMessage) => void,
): http.ClientRequest {
  return http.request(
    {
      host: url.hostname,
      port: url.port,
      path: url.pathname,
      method: 'GET',
      agent: false,
      headers: { accept: 'text/event-stream', cookie: `session=${encodeURIComponent(sessionCookie)}`, ...headers },
    },
    onResponse,
  );
}
