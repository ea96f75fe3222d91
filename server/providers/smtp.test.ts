import { createServer, type Server } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSmtpSink, type SmtpSink } from '@/server/testing/smtp-sink';
import { isPublicAddress } from '@/server/lib/public-fetch';
import { classifySmtpError, createSmtpProvider, newEmailMessageId, parseSmtpUrl } from './smtp';
import { MESSAGE_ID_HEADER, ProviderError, type EmailProvider, type EmailSendRequest } from './types';

const LOGO = randomBytes(4096);

let sink: SmtpSink;
let provider: EmailProvider;
let http: Server;
let httpBase: string;
let httpRequests: string[] = [];

beforeAll(async () => {
  sink = await startSmtpSink();
  // These tests serve attachments from 127.0.0.1, which production would refuse: admit it here only.
  provider = createSmtpProvider({ url: sink.url, attachmentFetchPolicy: { isAllowedAddress: (a) => a === '127.0.0.1' } });
  http = createServer((req, res) => {
    httpRequests.push(req.url ?? '');
    if (req.url === '/big') {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.end(Buffer.alloc(6 * 1024 * 1024));
    } else if (req.url === '/to-metadata') {
      res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' });
      res.end();
    } else if (req.url === '/logo.png') {
      res.writeHead(200, { 'content-type': 'image/png', 'content-length': LOGO.length });
      res.end(LOGO);
    } else if (req.url === '/to-file') {
      res.writeHead(302, { location: 'file:///etc/passwd' });
      res.end();
    } else {
      res.writeHead(404);
      res.end('not found');
    }
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const address = http.address();
  if (!address || typeof address === 'string') throw new Error('no http address');
  httpBase = `http://127.0.0.1:${address.port}`;
});

afterAll(async () => {
  await provider?.close();
  await sink?.close();
  await new Promise<void>((resolve) => (http ? http.close(() => resolve()) : resolve()));
});

beforeEach(() => {
  sink.clear();
  httpRequests = [];
});

function request(overrides: Partial<EmailSendRequest> = {}): EmailSendRequest {
  return {
    messageId: 42,
    from: 'hello@studio.example',
    fromName: 'Studio, Inc.',
    to: 'alice@example.com',
    subject: 'Your booking',
    text: 'See you on Friday.',
    ...overrides,
  };
}

async function freePort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('no address');
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return address.port;
}

async function expectProviderError(p: Promise<unknown>): Promise<ProviderError> {
  const err = await p.then(
    () => {
      throw new Error('expected the send to fail');
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ProviderError);
  return err as ProviderError;
}

describe('smtp provider against the sink', () => {
  it('delivers a full message: envelope, headers, bodies, attachments, threading', async () => {
    const result = await provider.send(
      request({
        cc: ['carol@example.com'],
        bcc: ['bob@example.com'],
        subject: 'Your booking — Friday',
        text: 'See you on Friday.',
        html: '<p>See you on <b>Friday</b>.</p>',
        attachments: [
          {
            filename: 'hello.txt',
            contentType: 'text/plain',
            content: Buffer.from('hello world\n').toString('base64'),
          },
          { filename: 'logo.png', contentType: 'image/png', url: `${httpBase}/logo.png` },
        ],
        inReplyTo: '<orig-1@studio.example>',
        references: ['<root-0@studio.example>', '<orig-1@studio.example>'],
      }),
    );

    expect(result.messageId).toMatch(/^<[0-9a-f-]{36}@studio\.example>$/);
    expect(result.accepted.sort()).toEqual(['alice@example.com', 'bob@example.com', 'carol@example.com']);
    expect(result.rejected).toEqual([]);

    expect(sink.messages).toHaveLength(1);
    const [msg] = sink.messages;
    if (!msg) throw new Error('no message');
    expect(msg.envelope.from).toBe('hello@studio.example');
    expect([...msg.envelope.to].sort()).toEqual(['alice@example.com', 'bob@example.com', 'carol@example.com']);

    const p = msg.parsed;
    // Bcc is in the envelope only.
    expect(p.headers.has('bcc')).toBe(false);
    expect(p.bcc).toBeUndefined();
    expect(msg.raw).not.toContain('bob@example.com');

    expect(p.from?.value).toEqual([{ name: 'Studio, Inc.', address: 'hello@studio.example' }]);
    const to = Array.isArray(p.to) ? p.to : [p.to];
    expect(to.flatMap((a) => a?.value.map((v) => v.address))).toEqual(['alice@example.com']);
    const cc = Array.isArray(p.cc) ? p.cc : [p.cc];
    expect(cc.flatMap((a) => a?.value.map((v) => v.address))).toEqual(['carol@example.com']);
    expect(p.subject).toBe('Your booking — Friday');
    expect(p.text?.trim()).toBe('See you on Friday.');
    expect(p.html).toContain('<p>See you on <b>Friday</b>.</p>');

    expect(p.messageId).toBe(result.messageId);
    expect(p.inReplyTo).toBe('<orig-1@studio.example>');
    expect(p.references).toEqual(['<root-0@studio.example>', '<orig-1@studio.example>']);

    expect(p.headers.get(MESSAGE_ID_HEADER.toLowerCase())).toBe('42');
    expect(msg.raw).toMatch(new RegExp(`^${MESSAGE_ID_HEADER}: 42\\r?$`, 'mi'));
    // Raw JSON on the wire, as SendGrid reads it (not MIME-encoded).
    expect(msg.raw).toMatch(/^X-SMTPAPI: \{"unique_args":\{"message_id":"42"\}\}\r?$/m);
    const smtpApi = p.headers.get('x-smtpapi');
    expect(typeof smtpApi).toBe('string');
    expect(JSON.parse(smtpApi as string)).toEqual({ unique_args: { message_id: '42' } });

    expect(p.attachments.map((a) => [a.filename, a.contentType])).toEqual([
      ['hello.txt', 'text/plain'],
      ['logo.png', 'image/png'],
    ]);
    expect(p.attachments[0]?.content.toString('utf8')).toBe('hello world\n');
    expect(p.attachments[1]?.content.equals(LOGO)).toBe(true);
    expect(httpRequests).toEqual(['/logo.png']);
  });

  it('names no message for mail that is none (a staff notification): no internal id header, no message_id argument', async () => {
    await provider.send(request({ messageId: null, businessId: 7 }));
    const p = sink.messages[0]!.parsed;
    expect(p.headers.get(MESSAGE_ID_HEADER.toLowerCase())).toBeUndefined();
    expect(JSON.parse(p.headers.get('x-smtpapi') as string)).toEqual({ unique_args: { business_id: '7' } });
  });

  it('omits the display name when there is none', async () => {
    await provider.send(request({ fromName: null }));
    expect(sink.messages[0]?.parsed.from?.value).toEqual([{ name: '', address: 'hello@studio.example' }]);
  });

  it('line breaks in user fields cannot inject headers', async () => {
    await provider.send(
      request({
        subject: 'Hi\r\nBcc: victim@example.com\r\nX-Injected: 1',
        fromName: 'Eve\r\nX-Injected: 2',
        inReplyTo: '<a@b>\r\nX-Injected: 3',
      }),
    );
    const msg = sink.messages[0];
    expect(msg?.envelope.to).toEqual(['alice@example.com']);
    expect(msg?.parsed.headers.has('x-injected')).toBe(false);
    expect(msg?.raw).not.toMatch(/^(X-Injected|Bcc):/im);
  });

  it('550 at bounce.test → permanent ProviderError with code 550', async () => {
    const err = await expectProviderError(provider.send(request({ to: 'nobody@bounce.test' })));
    expect(err.kind).toBe('permanent');
    expect(err.code).toBe('550');
    expect(sink.messages).toHaveLength(0);
  });

  it('a partly rejected recipient list still sends and reports the rejected address', async () => {
    const result = await provider.send(request({ cc: ['nobody@bounce.test'] }));
    expect(result.accepted).toEqual(['alice@example.com']);
    expect(result.rejected).toEqual(['nobody@bounce.test']);
    expect(sink.messages[0]?.envelope.to).toEqual(['alice@example.com']);
  });

  it('451 at tempfail.test → transient ProviderError with code 451', async () => {
    const err = await expectProviderError(provider.send(request({ to: 'later@tempfail.test' })));
    expect(err.kind).toBe('transient');
    expect(err.code).toBe('451');
  });

  it('all rejected with a mix of 550 and 451 → transient (someone may still get it later)', async () => {
    const err = await expectProviderError(provider.send(request({ to: 'nobody@bounce.test', cc: ['later@tempfail.test'] })));
    expect(err.kind).toBe('transient');
    expect(err.code).toBe('451');
  });

  it('a closed port → transient ECONNREFUSED', async () => {
    const port = await freePort();
    const closed = createSmtpProvider({ url: `smtp://127.0.0.1:${port}` });
    try {
      const err = await expectProviderError(closed.send(request()));
      expect(err.kind).toBe('transient');
      expect(err.code).toBe('ECONNREFUSED');
    } finally {
      await closed.close();
    }
  });

  it('a file:// attachment URL → permanent invalid_attachment, nothing read or sent', async () => {
    const err = await expectProviderError(
      provider.send(request({ attachments: [{ filename: 'passwd', url: 'file:///etc/passwd' }] })),
    );
    expect(err.kind).toBe('permanent');
    expect(err.code).toBe('invalid_attachment');
    expect(sink.messages).toHaveLength(0);
  });

  it('refuses other non-http attachment URLs and malformed attachments', async () => {
    for (const attachment of [
      { filename: 'x', url: 'ftp://example.com/x' },
      { filename: 'x', url: 'data:text/plain;base64,aGk=' },
      { filename: 'x', url: '/etc/passwd' },
      { filename: 'x' },
      { filename: 'x', content: 'aGk=', url: `${httpBase}/logo.png` },
      { filename: 'x', content: 'not base64!' },
    ]) {
      const err = await expectProviderError(provider.send(request({ attachments: [attachment] })));
      expect(err.kind, JSON.stringify(attachment)).toBe('permanent');
      expect(err.code).toBe('invalid_attachment');
    }
    expect(sink.messages).toHaveLength(0);
    expect(httpRequests).toEqual([]);
  });

  it('an http URL that redirects to file:// is not followed', async () => {
    const err = await expectProviderError(
      provider.send(request({ attachments: [{ filename: 'passwd', url: `${httpBase}/to-file` }] })),
    );
    expect(err.kind).toBe('permanent');
    expect(err.code).toBe('invalid_attachment');
    expect(sink.messages).toHaveLength(0);
    expect(httpRequests).toEqual(['/to-file']);
  });

  it('an attachment URL answering 404 fails the send (transient: the host may be back) and sends nothing', async () => {
    const err = await expectProviderError(
      provider.send(request({ attachments: [{ filename: 'gone.pdf', url: `${httpBase}/gone.pdf` }] })),
    );
    expect(err.kind).toBe('transient');
    expect(err.code).toBe('attachment_fetch_failed');
    expect(sink.messages).toHaveLength(0);
  });
});

describe('attachments by URL: no request forgery', () => {
  it('production refuses loopback, private, link-local and metadata addresses without connecting', async () => {
    const strict = createSmtpProvider({ url: sink.url });
    try {
      for (const url of [
        `${httpBase}/logo.png`,
        'http://localhost/x',
        'http://169.254.169.254/latest/meta-data/',
        'http://10.0.0.5/x',
        'http://[::1]/x',
        'http://[::ffff:127.0.0.1]/x',
        'http://0x7f000001/x',
      ]) {
        const err = await expectProviderError(strict.send(request({ attachments: [{ filename: 'x', url }] })));
        expect(err.kind, url).toBe('permanent');
        expect(err.code, url).toBe('attachment_url_refused');
      }
      expect(httpRequests).toEqual([]);
      expect(sink.messages).toHaveLength(0);
    } finally {
      await strict.close();
    }
  });

  it('a public name whose page redirects to a private address is refused at the redirect (resolver simulated)', async () => {
    // cdn.public.test plays a public host: it resolves to our local server, which this policy admits
    // as if public; everything else keeps the production rule.
    const port = Number(new URL(httpBase).port);
    const simulated = createSmtpProvider({
      url: sink.url,
      attachmentFetchPolicy: {
        resolve: async (host) => (host === 'cdn.public.test' ? [{ address: '127.0.0.1', family: 4 }] : []),
        isAllowedAddress: (a) => a === '127.0.0.1' || isPublicAddress(a),
      },
    });
    try {
      const err = await expectProviderError(
        simulated.send(request({ attachments: [{ filename: 'x', url: `http://cdn.public.test:${port}/to-metadata` }] })),
      );
      expect(err.code).toBe('attachment_url_refused');
      expect(err.message).toContain('169.254.169.254');
      expect(httpRequests).toEqual(['/to-metadata']);
      expect(sink.messages).toHaveLength(0);
    } finally {
      await simulated.close();
    }
  });

  it('an attachment over 5 MiB is cut off while it streams: permanent attachment_too_large', async () => {
    const err = await expectProviderError(
      provider.send(request({ attachments: [{ filename: 'big.bin', url: `${httpBase}/big` }] })),
    );
    expect(err.kind).toBe('permanent');
    expect(err.code).toBe('attachment_too_large');
    expect(sink.messages).toHaveLength(0);
  });

  it('isPublicAddress: only the public internet', () => {
    for (const a of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111']) expect(isPublicAddress(a), a).toBe(true);
    for (const a of [
      '127.0.0.1',
      '10.1.2.3',
      '172.31.255.255',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '224.0.0.1',
      '255.255.255.255',
      '::1',
      '::',
      'fe80::1',
      'fd00::1',
      '::ffff:127.0.0.1',
      '::ffff:8.8.8.8',
      '64:ff9b::a00:1',
      '2002:7f00:1::',
      'not-an-ip',
    ]) {
      expect(isPublicAddress(a), a).toBe(false);
    }
  });

  it('50 concurrent sends through the pool all arrive', async () => {
    const count = 50;
    const pooled = createSmtpProvider({ url: sink.url, maxConnections: 5 });
    try {
      const started = performance.now();
      const results = await Promise.all(
        Array.from({ length: count }, (_, i) =>
          pooled.send(request({ messageId: 1000 + i, to: `user${i}@example.com`, subject: `Bulk ${i}` })),
        ),
      );
      await sink.waitFor(count, 10_000);
      const elapsed = performance.now() - started;
      console.info(`[smtp pool] ${count} emails in ${elapsed.toFixed(0)} ms = ${((count * 1000) / elapsed).toFixed(0)} emails/s`);
      expect(new Set(results.map((r) => r.messageId)).size).toBe(count);
      expect(sink.messages).toHaveLength(count);
      const ids = sink.messages.map((m) => m.parsed.headers.get(MESSAGE_ID_HEADER.toLowerCase())).sort();
      expect(ids).toEqual(Array.from({ length: count }, (_, i) => String(1000 + i)).sort());
    } finally {
      await pooled.close();
    }
  });
});

describe('smtp helpers', () => {
  it('newEmailMessageId uses the domain of the From address', () => {
    expect(newEmailMessageId('hello@Studio.Example')).toMatch(/^<[0-9a-f-]{36}@studio\.example>$/);
    expect(newEmailMessageId('x@bücher.example')).toMatch(/@xn--bcher-kva\.example>$/);
    expect(newEmailMessageId('no-domain')).toMatch(/@localhost>$/);
    expect(newEmailMessageId('a@b@bad domain')).toMatch(/@localhost>$/);
    expect(newEmailMessageId('a@x.example')).not.toBe(newEmailMessageId('a@x.example'));
  });

  it('parseSmtpUrl: ports, TLS and credentials', () => {
    expect(parseSmtpUrl('smtp://127.0.0.1:2525')).toEqual({
      host: '127.0.0.1',
      port: 2525,
      secure: false,
      ignoreTLS: true,
      requireTLS: false,
    });
    expect(parseSmtpUrl('smtp://apikey:SG.a%2Fb@smtp.sendgrid.net:587')).toEqual({
      host: 'smtp.sendgrid.net',
      port: 587,
      secure: false,
      auth: { user: 'apikey', pass: 'SG.a/b' },
      ignoreTLS: false,
      requireTLS: true,
    });
    expect(parseSmtpUrl('smtps://u:p@mail.example')).toMatchObject({ port: 465, secure: true, requireTLS: false });
    expect(parseSmtpUrl('smtp://mailpit:1025')).toMatchObject({ ignoreTLS: false, requireTLS: false });
    expect(parseSmtpUrl('smtp://mailpit:1025?ignoreTLS=true')).toMatchObject({ ignoreTLS: true });
    expect(parseSmtpUrl('smtp://localhost:25?ignoreTLS=false')).toMatchObject({ ignoreTLS: false });
    expect(parseSmtpUrl('smtp://u:p@relay.internal?requireTLS=false')).toMatchObject({ requireTLS: false });
    expect(parseSmtpUrl('smtp://[::1]:2525')).toMatchObject({ host: '::1', ignoreTLS: true });
    expect(() => parseSmtpUrl('http://example.com')).toThrow(/smtp/);
    expect(() => parseSmtpUrl('not a url')).toThrow();
  });

  it('classifySmtpError', () => {
    const cases: { error: Record<string, unknown>; is: { kind: string; code?: string } }[] = [
      { error: { code: 'EENVELOPE', responseCode: 550 }, is: { kind: 'permanent', code: '550' } },
      { error: { code: 'EMESSAGE', responseCode: 552 }, is: { kind: 'permanent', code: '552' } },
      { error: { code: 'EMESSAGE', responseCode: 503 }, is: { kind: 'transient' } },
      { error: { code: 'EENVELOPE', responseCode: 421 }, is: { kind: 'transient', code: '421' } },
      { error: { code: 'EAUTH', responseCode: 535 }, is: { kind: 'transient', code: 'EAUTH' } },
      { error: { code: 'ETIMEDOUT' }, is: { kind: 'transient', code: 'ETIMEDOUT' } },
      { error: { code: 'EDNS', originalCode: 'ENOTFOUND' }, is: { kind: 'transient', code: 'ENOTFOUND' } },
      { error: { code: 'EFILEACCESS' }, is: { kind: 'permanent' } },
      { error: { code: 'ESTREAM', originalCode: 'EFILEACCESS' }, is: { kind: 'permanent', code: 'invalid_attachment' } },
      { error: { code: 'ESOCKET', originalCode: 'ECONNREFUSED' }, is: { kind: 'transient', code: 'ECONNREFUSED' } },
    ];
    for (const { error, is } of cases) {
      expect(classifySmtpError(Object.assign(new Error('x'), error)), JSON.stringify(error)).toMatchObject(is);
    }
    expect(classifySmtpError(new Error('boom'))).toMatchObject({ kind: 'transient', code: 'unknown' });
  });
});
