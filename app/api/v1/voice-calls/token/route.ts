import { getDialerToken as op } from '@/server/http/operations/voice';
import { route } from '@/server/http/route';
import { dialerTokenSubject, issueDialerToken } from '@/server/services/voice/token';

// GET: a Twilio access token for the browser dialer (a session's own staff member, or one named with an API key).
export const GET = route(op, async ({ caller, query, tx }) => issueDialerToken(await dialerTokenSubject(caller, query, tx), tx));
