import { sessionCookie } from '@/server/web/credentials';
import { SESSION_TTL } from '@/server/schemas/auth';
import { redeemLoginCode } from '@/server/services/auth';

export const dynamic = 'force-dynamic';

/** What staff do to get in: the inbox is opened from the business's own system, which makes a fresh link each time. */
const HOW_TO_GET_IN =
  '<p>Go back to the system your business uses (where you usually click <strong>Inbox</strong>) and open the inbox from there: it signs you in with a fresh link.</p>' +
  '<p>Were you sent a link by email or text instead? Ask your manager to send you a new one.</p>';

/** A page for staff: `text` is HTML paragraphs of our own, never anything from the request. */
function page(status: number, title: string, text: string): Response {
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><link rel="icon" href="/icon.svg" type="image/svg+xml"><title>${title}</title>
<style>body{font-family:system-ui,sans-serif;display:grid;place-items:center;min-height:100vh;margin:0;background:#f6f7f9;color:#1f2937}main{max-width:28rem;padding:2rem;background:#fff;border-radius:12px;box-shadow:0 1px 3px #0002}h1{font-size:1.25rem}</style></head>
<body><main><h1>${title}</h1>${text}</main></body></html>`;
  return new Response(html, { status, headers: { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' } });
}

// GET /login?token=…: the login callback. A one-time login code, on its first use, becomes a fresh
// session cookie and the staff member lands in the inbox; anything else gets a page that says what
// to do. The code is dead after this, so a link left in a history or a log opens nothing.
export async function GET(req: Request) {
  const token = new URL(req.url).searchParams.get('token');
  if (!token) {
    return page(200, 'Sign in', `<p>You need a sign-in link to open the inbox.</p>${HOW_TO_GET_IN}`);
  }
  let session: Awaited<ReturnType<typeof redeemLoginCode>>;
  try {
    session = token.length <= 128 ? await redeemLoginCode(token) : null;
  } catch {
    // The transaction rolled back, so the code is still good: say so rather than "expired".
    return page(503, 'Sign-in is unavailable right now', '<p>Please open the same link again in a minute.</p>');
  }
  if (!session) {
    return page(
      401,
      'This sign-in link was already used or has expired',
      `<p>Each sign-in link works once, within 10 minutes.</p>${HOW_TO_GET_IN}`,
    );
  }
  return new Response(null, {
    status: 303,
    headers: {
      Location: '/inbox',
      // The server enforces the sliding expiry; the cookie just has to outlive the longest session.
      'Set-Cookie': sessionCookie(session.token, SESSION_TTL.max),
      'Cache-Control': 'no-store',
    },
  });
}
