import { NextResponse, type NextRequest } from 'next/server';
import { pagePolicy, permissionsPolicy } from '@/server/web/security-headers';

/**
 * Pages only (see `config.matcher`): a fresh CSP nonce per request, on the request (Next.js reads
 * it there to mark its own scripts) and on the response, with the Permissions-Policy for the path.
 * The headers every answer carries (nosniff, framing, referrer, HSTS) are in next.config.mjs.
 */
export function proxy(request: NextRequest) {
  const nonce = Buffer.from(crypto.randomUUID()).toString('base64');
  const policy = pagePolicy(nonce, process.env.NODE_ENV !== 'production');
  const headers = new Headers(request.headers);
  headers.set('x-nonce', nonce);
  headers.set('content-security-policy', policy);
  const response = NextResponse.next({ request: { headers } });
  response.headers.set('Content-Security-Policy', policy);
  response.headers.set('Permissions-Policy', permissionsPolicy(request.nextUrl.pathname));
  if (process.env.PUBLIC_BASE_URL?.startsWith('https:')) {
    response.headers.set('Strict-Transport-Security', 'max-age=31536000; includeSubDomains');
  }
  return response;
}

export const config = {
  // Everything but the API (its own headers, and no per-request work for webhooks) and static files.
  matcher: [{ source: '/((?!api/|_next/static|_next/image|favicon.ico).*)' }],
};
