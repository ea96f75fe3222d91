import { lookup as dnsLookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';

/**
 * Fetches a URL a caller gave us (an email attachment's `url`) without letting it reach inside
 * our network: http(s) only (https only with `httpsOnly`); the host name is resolved once and every
 * address it resolves to must be public (no loopback, private, link-local, CGNAT, multicast, reserved
 * or documentation range, IPv4 or IPv6, mapped and translated forms included); the connection goes
 * to that vetted address (so DNS cannot answer differently a moment later); each redirect is checked
 * the same way, at most 3 of them; one deadline for everything (10 s: the look-ups, every hop and
 * the body together, however slowly each one trickles); and the body is cut off past `maxBytes`
 * while it streams.
 */
export class FetchRefused extends Error {
  constructor(
    readonly reason: 'refused_address' | 'too_large' | 'bad_url' | 'failed',
    message: string,
  ) {
    super(message);
    this.name = 'FetchRefused';
  }
}

export type ResolvedAddress = { address: string; family: number };
export type Resolver = (host: string) => Promise<ResolvedAddress[]>;

export type FetchPolicy = {
  maxBytes: number;
  /** Name → addresses; the system resolver unless a test simulates DNS. */
  resolve?: Resolver;
  /** Which addresses may be reached; public ones only unless a test says otherwise. */
  isAllowedAddress?: (address: string) => boolean;
  /** The whole fetch, every redirect and the body included: one deadline, never a fresh one per hop. */
  timeoutMs?: number;
  maxRedirects?: number;
  /** Refuse plain http, for the first URL and every redirect (MMS media: docs/api.md#mms). */
  httpsOnly?: boolean;
  /** Trusted roots for https; the system's unless a test serves its own certificate. */
  ca?: string;
};

// Two lists: a BlockList matches an IPv4 address against IPv6 rules in its mapped form, and the
// mapped range is refused as a whole.
const NON_PUBLIC_V4 = new net.BlockList();
const NON_PUBLIC_V6 = new net.BlockList();
for (const [prefix, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  NON_PUBLIC_V4.addSubnet(prefix, bits, 'ipv4');
for (const [prefix, bits] of [
  ['::', 128],
  ['::1', 128],
  ['::ffff:0:0', 96],
  ['::', 96],
  ['64:ff9b::', 96],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001::', 23],
  ['2001:db8::', 32],
  ['2002::', 16],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const)
  NON_PUBLIC_V6.addSubnet(prefix, bits, 'ipv6');

/** True for an address on the public internet (IPv4-mapped, compatible, NAT64 and 6to4 forms count as not public). */
export function isPublicAddress(address: string): boolean {
  const family = net.isIP(address);
  if (family === 0) return false;
  return family === 4 ? !NON_PUBLIC_V4.check(address, 'ipv4') : !NON_PUBLIC_V6.check(address, 'ipv6');
}

const systemResolver: Resolver = async (host) => dnsLookup(host, { all: true, verbatim: true });

export async function fetchPublic(url: string, policy: FetchPolicy): Promise<{ bytes: Buffer; contentType: string | null }> {
  const deadline = Date.now() + (policy.timeoutMs ?? 10_000);
  let current = url;
  for (let redirects = 0; ; redirects++) {
    const target = await beforeDeadline(vet(current, policy), deadline, current);
    const res = await request(target, deadline, policy.ca);
    const location = res.headers.location;
    if (res.statusCode && res.statusCode >= 300 && res.statusCode < 400 && location) {
      res.resume();
      if (redirects >= (policy.maxRedirects ?? 3)) throw new FetchRefused('failed', `${url}: too many redirects`);
      current = new URL(location, current).toString();
      continue;
    }
    if (!res.statusCode || res.statusCode >= 400) {
      res.resume();
      throw new FetchRefused('failed', `${current} answered ${res.statusCode}`);
    }
    const bytes = await readLimited(res, policy.maxBytes, deadline);
    return { bytes, contentType: res.headers['content-type'] ?? null };
  }
}

type Vetted = { url: URL; address: string; family: number };

async function vet(raw: string, policy: FetchPolicy): Promise<Vetted> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new FetchRefused('bad_url', 'not a valid URL');
  }
  if (url.protocol !== 'https:' && (url.protocol !== 'http:' || policy.httpsOnly))
    throw new FetchRefused('bad_url', `only ${policy.httpsOnly ? 'https' : 'http(s)'} URLs, not ${url.protocol}`);
  if (url.username || url.password) throw new FetchRefused('bad_url', 'URLs with credentials are not fetched');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const addresses = await resolveAllowed(host, policy.resolve, policy.isAllowedAddress ?? isPublicAddress);
  return { url, address: addresses[0]!.address, family: addresses[0]!.family };
}

/**
 * Every address `host` resolves to (an IP literal is its own), or a FetchRefused: `failed` when it
 * resolves to nothing, `refused_address` when any one of them is not allowed (a name that answers
 * one public and one private address could be steered to the private one).
 */
export async function resolveAllowed(
  host: string,
  resolve: Resolver | undefined,
  allowed: (address: string) => boolean,
): Promise<ResolvedAddress[]> {
  const family = net.isIP(host);
  const addresses = family ? [{ address: host, family }] : await (resolve ?? systemResolver)(host).catch(() => []);
  if (addresses.length === 0) throw new FetchRefused('failed', `${host} does not resolve`);
  const refused = addresses.find((a) => !allowed(a.address));
  if (refused)
    throw new FetchRefused(
      'refused_address',
      `${family ? host : `${host} resolves to ${refused.address}, which`} is not a public address`,
    );
  return addresses;
}

/** `work`, or a FetchRefused once the deadline passes (a resolver that never answers included). */
async function beforeDeadline<T>(work: Promise<T>, deadline: number, url: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new FetchRefused('failed', `${url}: timed out`)), Math.max(0, deadline - Date.now()));
  });
  try {
    return await Promise.race([work, expired]);
  } finally {
    clearTimeout(timer);
  }
}

function request(target: Vetted, deadline: number, ca: string | undefined): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    const client = target.url.protocol === 'https:' ? https : http;
    // A hard stop at the deadline, not a socket idle timeout: a server that trickles its answer a
    // byte at a time, or a chain of slow redirects, is cut at the same moment as a silent one.
    const timer = setTimeout(
      () => req.destroy(new FetchRefused('failed', `${target.url.host} timed out`)),
      Math.max(0, deadline - Date.now()),
    );
    const req = client.request(
      target.url,
      {
        method: 'GET',
        ...(ca && target.url.protocol === 'https:' ? { ca } : {}),
        // The connection goes to the vetted address whatever DNS says now; Host and TLS SNI keep the name.
        lookup: (_host, options, callback) =>
          (options as { all?: boolean }).all
            ? (callback as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [
                { address: target.address, family: target.family },
              ])
            : callback(null, target.address, target.family),
        headers: { 'user-agent': 'convo-messaging attachment fetcher' },
      },
      (res) => {
        clearTimeout(timer);
        resolve(res);
      },
    );
    req.on('error', (err) => {
      clearTimeout(timer);
      reject(err instanceof FetchRefused ? err : new FetchRefused('failed', `${target.url.host}: ${err.message}`));
    });
    req.end();
  });
}

function readLimited(res: http.IncomingMessage, maxBytes: number, deadline: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(res.headers['content-length'] ?? 0);
    if (declared > maxBytes) {
      res.destroy();
      return reject(new FetchRefused('too_large', `over ${maxBytes} bytes`));
    }
    const chunks: Buffer[] = [];
    let total = 0;
    const timer = setTimeout(
      () => res.destroy(new FetchRefused('failed', 'timed out while reading')),
      Math.max(1, deadline - Date.now()),
    );
    res.on('data', (chunk: Buffer) => {
      total += chunk.length;
      if (total > maxBytes) {
        clearTimeout(timer);
        res.destroy();
        reject(new FetchRefused('too_large', `over ${maxBytes} bytes`));
        return;
      }
      chunks.push(chunk);
    });
    res.on('end', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks));
    });
    res.on('error', (err) => {
      clearTimeout(timer);
      reject(err instanceof FetchRefused ? err : new FetchRefused('failed', err.message));
    });
  });
}
