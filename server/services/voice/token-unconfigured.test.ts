import { describe, expect, it, vi } from 'vitest';
import { AppError } from '@/server/errors';
import { getJson, restTenant } from '@/server/testing/http';
import { issueDialerToken } from './token';

// Twilio REST credentials alone (SMS works) are not enough for voice: the API key and TwiML app are missing.
vi.hoisted(() => {
  for (const name of ['TWILIO_API_KEY_SID', 'TWILIO_API_KEY_SECRET', 'TWILIO_TWIML_APP_SID']) delete process.env[name];
  Object.assign(process.env, {
    TWILIO_ACCOUNT_SID: `AC${'a'.repeat(32)}`,
    TWILIO_AUTH_TOKEN: 'auth-token-for-tests',
    SMS_PROVIDER: 'sandbox',
  });
});

describe('GET /voice-calls/token without voice configuration', () => {
  it('is a 503 whose body says voice is not configured and names what is missing', async () => {
    const t = await restTenant();
    const { status, body } = await getJson('/api/v1/voice-calls/token', t.session);
    expect(status).toBe(503);
    expect(body).toEqual({
      detail: 'Voice calling is not configured: set TWILIO_API_KEY_SID, TWILIO_API_KEY_SECRET, TWILIO_TWIML_APP_SID',
    });
  });

  it('issueDialerToken throws AppError not_configured (the tRPC door maps it to SERVICE_UNAVAILABLE)', async () => {
    const t = await restTenant();
    const error = await issueDialerToken({ businessId: t.business.id, staffId: t.owner.id }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({ code: 'not_configured' });
  });
});
