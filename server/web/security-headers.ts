/**
 * The security headers, in one place. Pages get a Content-Security-Policy with a fresh nonce per
 * request (set by proxy.ts; Next.js puts the nonce on its own scripts): no script runs unless it
 * carries the nonce or was loaded by one that did ('strict-dynamic'). API answers are JSON, XML or
 * the API reference, and get a policy that loads nothing (next.config.mjs).
 */
export function pagePolicy(nonce: string, development: boolean): string {
  return [
    "default-src 'self'",
    // React's development runtime evaluates code; production never does.
    `script-src 'self' 'nonce-${nonce}' 'strict-dynamic'${development ? " 'unsafe-eval'" : ''}`,
    // Inline style attributes (positions of the virtualized list) and Next's injected styles.
    "style-src 'self' 'unsafe-inline'",
    // Email frames inherit this policy: remote images appear once staff ask ("Show images"), and
    // their own stricter policy withholds them until then.
    "img-src 'self' data: blob: https: http:",
    // Call recordings play from Twilio.
    "media-src 'self' blob: https:",
    // The dialer (@twilio/voice-sdk) talks to Twilio over HTTPS and WebSockets.
    "connect-src 'self' https://*.twilio.com wss://*.twilio.com",
    "worker-src 'self' blob:",
    "font-src 'self' data:",
    "frame-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    // Nothing may frame the inbox (clickjacking).
    "frame-ancestors 'none'",
  ].join('; ');
}

/** The microphone for the dialer, on the inbox only; nothing else a page could ask the browser for. */
export function permissionsPolicy(pathname: string): string {
  const microphone = pathname.startsWith('/inbox') ? 'microphone=(self)' : 'microphone=()';
  return `${microphone}, camera=(), geolocation=(), payment=(), usb=()`;
}
