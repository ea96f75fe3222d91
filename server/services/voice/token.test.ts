import { createHmac, timingSafeEqual } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { describe, expect, it, vi } from 'vitest';
import { db } from '@/server/db/client';
import { staff } from '@/db/schema';
import { createStaff } from '@/server/testing/factories';
import { api, getJson, jsonOf, restTenant } from '@/server/testing/http';
import { issueDialerToken } from './token';

// Voice configured for this file only (env() is read lazily, after this runs).
const VOICE = vi.hoisted(() => {
  const voice = {
    TWILIO_ACCOUNT_SID: `AC${'a'.repeat(32)}`,
    TWILIO_API_KEY_SID: `SK${'b'.repeat(32)}`,
    TWILIO_API_KEY_SECRET: 'api-key-secret-for-tests-0123456789',
    TWILIO_TWIML_APP_SID: `AP${'c'.repeat(32)}`,
    SMS_PROVIDER: 'sandbox',
  };
  Object.assign(process.env, voice);
  return voice;
});

const PATH = '/api/v1/voice-calls/token';

/** Splits a JWT and checks its HS256 signature with the API key secret, as Twilio does. */
function decodeJwt(token: string) {
  const [header, payload, signature] = token.split('.');
  const expected = createHmac('sha256', VOICE.TWILIO_API_KEY_SECRET).update(`${header}.${payload}`).digest();
  const given = Buffer.from(signature!, 'base64url');
  expect(given.length === expected.length && timingSafeEqual(given, expected), 'HS256 signature with the API key secret').toBe(
    true,
  );
  const json = (part: string) => JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
  return { header: json(header!), payload: json(payload!) };
}

function expectVoiceToken(body: { token: string; identity: string; expires_at: string }, staffId: number) {
  const { header, payload } = decodeJwt(body.token);
  expect(header).toMatchObject({ alg: 'HS256', typ: 'JWT', cty: 'twilio-fpa;v=1' });
  expect(payload).toMatchObject({
    iss: VOICE.TWILIO_API_KEY_SID,
    sub: VOICE.TWILIO_ACCOUNT_SID,
    grants: {
      identity: `staff-${staffId}`,
      voice: { incoming: { allow: true }, outgoing: { application_sid: VOICE.TWILIO_TWIML_APP_SID } },
    },
  });
  expect(payload.jti).toBe(`${VOICE.TWILIO_API_KEY_SID}-${payload.iat}`);
  expect(payload.exp - payload.iat).toBe(3600);
  expect(Math.abs(payload.exp - (Date.now() / 1000 + 3600))).toBeLessThan(60);
  expect(body.identity).toBe(`staff-${staffId}`);
  expect(body.expires_at).toBe(new Date(payload.exp * 1000).toISOString());
}

describe('GET /voice-calls/token', () => {
  it('a session gets a one-hour Voice token for its own staff member', async () => {
    const t = await restTenant();
    const { status, body } = await getJson(PATH, t.session);
    expect(status).toBe(200);
    expect(Object.keys(body).sort()).toEqual(['expires_at', 'identity', 'token']);
    expectVoiceToken(body, t.owner.id);
  });

  it('a session naming another staff member (or business) is refused', async () => {
    const t = await restTenant();
    const colleague = await createStaff(t.business.id);
    expect((await getJson(`${PATH}?staff_id=${colleague.id}`, t.session)).status).toBe(403);
    expect((await getJson(`${PATH}?business_id=${t.business.id + 1}`, t.session)).status).toBe(403);
    expect((await getJson(`${PATH}?business_id=${t.business.id}&staff_id=${t.owner.id}`, t.session)).status).toBe(200);
  });

  it('a business key names its business and an active staff member; the platform key any business', async () => {
    const t = await restTenant();
    const colleague = await createStaff(t.business.id);
    const byKey = await getJson(`${PATH}?business_id=${t.business.id}&staff_id=${colleague.id}`, t.key);
    expect(byKey.status).toBe(200);
    expectVoiceToken(byKey.body, colleague.id);
    const byPlatform = await getJson(`${PATH}?business_id=${t.business.id}&staff_id=${colleague.id}`, {
      'x-api-key': process.env.PLATFORM_API_KEY!,
    });
    expect(byPlatform.status).toBe(200);
    expectVoiceToken(byPlatform.body, colleague.id);
  });

  it("tenancy: another business is 403 to a business key; another business's or an inactive staff member is 422; an unknown business is 422", async () => {
    const t = await restTenant();
    const other = await restTenant();
    expect((await getJson(`${PATH}?business_id=${other.business.id}&staff_id=${other.owner.id}`, t.key)).status).toBe(403);

    const foreign = await getJson(`${PATH}?business_id=${t.business.id}&staff_id=${other.owner.id}`, t.key);
    expect(foreign.status).toBe(422);
    expect(foreign.body.detail[0].loc).toEqual(['query', 'staff_id']);

    const gone = await createStaff(t.business.id);
    await db.update(staff).set({ active: false }).where(eq(staff.id, gone.id));
    const inactive = await getJson(`${PATH}?business_id=${t.business.id}&staff_id=${gone.id}`, t.key);
    expect(inactive.status).toBe(422);
    expect(inactive.body.detail[0]).toMatchObject({ loc: ['query', 'staff_id'], msg: expect.stringContaining('not active') });

    const unknown = await getJson(`${PATH}?business_id=999999999&staff_id=${t.owner.id}`, {
      'x-api-key': process.env.PLATFORM_API_KEY!,
    });
    expect(unknown.status).toBe(422);
    expect(unknown.body.detail[0].loc).toEqual(['query', 'business_id']);
  });

  it('an API key must name business_id and staff_id (422); no credentials is 401', async () => {
    const t = await restTenant();
    const missing = await getJson(PATH, t.key);
    expect(missing.status).toBe(422);
    expect(missing.body.detail.map((d: { loc: string[] }) => d.loc)).toEqual([
      ['query', 'business_id'],
      ['query', 'staff_id'],
    ]);
    expect((await getJson(`${PATH}?business_id=abc&staff_id=1`, t.key)).status).toBe(422);
    const anonymous = await api.get(PATH);
    expect(anonymous.status).toBe(401);
    expect(await jsonOf(anonymous)).toEqual({ detail: 'Not authenticated' });
  });

  it('issueDialerToken (the tRPC door) answers the same contract', async () => {
    const t = await restTenant();
    const token = await issueDialerToken({ businessId: t.business.id, staffId: t.owner.id });
    expectVoiceToken(token, t.owner.id);
  });
});
