import { SMTPServer, type SMTPServerAddress } from 'smtp-server';
import { simpleParser, type ParsedMail } from 'mailparser';

/**
 * A real SMTP server on 127.0.0.1 (random port) that keeps every message it receives, for tests and local
 * development. No TLS, any (or no) credentials accepted.
 *
 * - RCPT TO an address at `failRcptDomain` (default `bounce.test`) → `550` (permanent).
 * - RCPT TO an address at `tempFailDomain` (default `tempfail.test`) → `451` (transient).
 * - Messages over 25 MB → `552`.
 *
 * A message is parsed (mailparser) and pushed to `messages` before the server answers `250`, so once the
 * client's send resolves, the message is already there.
 */
type SinkMessage = {
  envelope: { from: string; to: string[] };
  raw: string;
  parsed: ParsedMail;
};

export type SmtpSink = {
  port: number;
  /** `smtp://127.0.0.1:PORT` */
  url: string;
  messages: SinkMessage[];
  /** Resolves once `messages.length >= count`; rejects after `timeoutMs` (default 5000). */
  waitFor(count: number, timeoutMs?: number): Promise<void>;
  clear(): void;
  close(): Promise<void>;
};

type SmtpSinkOptions = {
  failRcptDomain?: string;
  tempFailDomain?: string;
};

const MAX_SIZE = 25 * 1024 * 1024;

function smtpError(message: string, responseCode: number): Error {
  return Object.assign(new Error(message), { responseCode });
}

function domainOf(address: string): string {
  return address.slice(address.lastIndexOf('@') + 1).toLowerCase();
}

export async function startSmtpSink(options: SmtpSinkOptions = {}): Promise<SmtpSink> {
  const failDomain = (options.failRcptDomain ?? 'bounce.test').toLowerCase();
  const tempDomain = (options.tempFailDomain ?? 'tempfail.test').toLowerCase();
  const messages: SinkMessage[] = [];
  let waiters: Array<{ count: number; resolve: () => void }> = [];

  const notify = () => {
    if (!waiters.length) return;
    const ready = waiters.filter((w) => messages.length >= w.count);
    if (!ready.length) return;
    waiters = waiters.filter((w) => messages.length < w.count);
    for (const w of ready) w.resolve();
  };

  const server = new SMTPServer({
    secure: false,
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    size: MAX_SIZE,
    logger: false,
    // A reverse DNS lookup per connection costs time and can stall offline.
    disableReverseLookup: true,
    // close() should not wait 30 s for idle pooled client connections.
    closeTimeout: 100,
    onAuth(_auth, _session, callback) {
      callback(null, { user: 'sink' });
    },
    onRcptTo(address: SMTPServerAddress, _session, callback) {
      const domain = domainOf(address.address);
      if (domain === failDomain) {
        return callback(smtpError(`5.1.1 <${address.address}>: mailbox unavailable`, 550));
      }
      if (domain === tempDomain) {
        return callback(smtpError(`4.2.0 <${address.address}>: try again later`, 451));
      }
      callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('error', (err: Error) => callback(err));
      stream.on('end', () => {
        if (stream.sizeExceeded) {
          return callback(smtpError('5.3.4 Message exceeds the fixed size limit', 552));
        }
        const rawBuffer = Buffer.concat(chunks);
        const envelope = {
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
        };
        simpleParser(rawBuffer).then(
          (parsed) => {
            messages.push({ envelope, raw: rawBuffer.toString('utf8'), parsed });
            notify();
            callback(null, `Queued as sink-${messages.length}`);
          },
          (err: unknown) => callback(smtpError(`4.6.0 sink could not parse message: ${String(err)}`, 451)),
        );
      });
    },
  });

  await new Promise<void>((resolve, reject) => {
    const onError = (err: Error) => reject(err);
    server.once('error', onError);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', onError);
      resolve();
    });
  });
  // Keep a late socket error from becoming an unhandled 'error' event.
  server.on('error', () => {});

  const address = server.server.address();
  if (!address || typeof address === 'string') throw new Error('smtp sink: no TCP address');
  const port = address.port;

  return {
    port,
    url: `smtp://127.0.0.1:${port}`,
    messages,
    waitFor(count: number, timeoutMs = 5000): Promise<void> {
      if (messages.length >= count) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const waiter = {
          count,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        };
        const timer = setTimeout(() => {
          waiters = waiters.filter((w) => w !== waiter);
          reject(new Error(`smtp sink: ${messages.length} of ${count} messages after ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.push(waiter);
      });
    },
    clear() {
      messages.length = 0;
    },
    close(): Promise<void> {
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Idle pooled connections would otherwise hold the server open until closeTimeout.
        for (const connection of server.connections) connection.close();
      });
    },
  };
}

/** The environment that points the product's providers at the fakes: the fake Twilio API and this sink. */
export function fakeProvidersEnv(fake: { accountSid: string; authToken: string; url: string }, sink: { url: string }) {
  return {
    SMS_PROVIDER: 'twilio',
    TWILIO_ACCOUNT_SID: fake.accountSid,
    TWILIO_AUTH_TOKEN: fake.authToken,
    TWILIO_API_BASE_URL: fake.url,
    EMAIL_PROVIDER: 'smtp',
    SMTP_URL: sink.url,
  };
}
