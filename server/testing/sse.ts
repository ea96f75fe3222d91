/**
 * Splits a decoded `text/event-stream` body into its messages, the way EventSource does for the
 * fields the event streams use: feed it the body's chunks as they come; each complete message
 * (ended by a blank line) is handed to `onMessage` with its `event:` type ('message' when none)
 * and its `data:` lines joined.
 */
export function sseParser(onMessage: (event: string, data: string) => void): (chunk: string) => void {
  let buffer = '';
  return (chunk) => {
    buffer += chunk;
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const message = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let event = 'message';
      let data = '';
      for (const line of message.split('\n')) {
        if (line.startsWith('event: ')) event = line.slice(7);
        else if (line.startsWith('data: ')) data += line.slice(6);
      }
      onMessage(event, data);
    }
  };
}
