import { eq } from 'drizzle-orm';
import { describe, expect, it, vi } from 'vitest';
import { logger } from '@/server/logger';
import { db } from '@/server/db/client';
import { businesses } from '@/db/schema';
import { createClient, createConversation, createTenant } from '@/server/testing/factories';
import { createContext } from './init';
import { createCaller } from './root';

async function callerFor(token: string) {
  const req = new Request('http://localhost:3000/api/trpc/x', {
    headers: { host: 'localhost:3000', cookie: `session=${token}` },
  });
  return createCaller(await createContext({ req }));
}

describe('tRPC voice router (the browser dialer)', () => {
  it('token: answers configured false when voice is not set up (no failing request); the settings go to the server log, once', async () => {
    // The test environment sets no TWILIO_API_KEY_* / TWILIO_TWIML_APP_SID.
    const warn = vi.spyOn(logger, 'warn').mockImplementation(() => undefined);
    try {
      const a = await createTenant();
      const trpc = await callerFor(a.sessionToken);
      expect(await trpc.voice.token()).toEqual({ configured: false });
      expect(await trpc.voice.token()).toEqual({ configured: false });
      const logged = warn.mock.calls.filter(([, message]) => String(message).startsWith('Voice calling is not configured'));
      expect(logged).toHaveLength(1);
      expect(logged[0]![1]).toMatch(/TWILIO_API_KEY_SID/);
    } finally {
      warn.mockRestore();
    }
  });

  it('token: needs a session', async () => {
    const trpc = createCaller(await createContext({ req: new Request('http://localhost:3000/api/trpc/x') }));
    await expect(trpc.voice.token()).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
  });

  it('clientForCaller: the business’s client (and conversation) behind a number, never another business’s', async () => {
    const a = await createTenant();
    const b = await createTenant();
    const ada = await createClient(a.business.id, { name: 'Ada Stone', phoneNumber: '+14155550123' });
    const conv = await createConversation(a.business.id, ada.id);
    await createClient(b.business.id, { name: 'Other Business Client', phoneNumber: '+14155550999' });
    const trpc = await callerFor(a.sessionToken);

    expect(await trpc.voice.clientForCaller({ phone: '+14155550123' })).toEqual({
      clientId: ada.id,
      name: 'Ada Stone',
      conversationId: conv.id,
    });
    expect(await trpc.voice.clientForCaller({ phone: '(415) 555-0123' })).toMatchObject({ clientId: ada.id });
    expect(await trpc.voice.clientForCaller({ phone: '+14155550999' })).toBeNull();
    expect(await trpc.voice.clientForCaller({ phone: 'client:staff-1' })).toBeNull();
  });

  it('clientForCaller: a number as the business’s callers dial it, read in the business’s own country (not as US)', async () => {
    const a = await createTenant();
    await db.update(businesses).set({ country: 'GB' }).where(eq(businesses.id, a.business.id));
    const lee = await createClient(a.business.id, { name: 'Lee Park', phoneNumber: '+442079460123' });
    const trpc = await callerFor(a.sessionToken);

    expect(await trpc.voice.clientForCaller({ phone: '020 7946 0123' })).toEqual({
      clientId: lee.id,
      name: 'Lee Park',
      conversationId: null,
    });
    expect(await trpc.voice.clientForCaller({ phone: '+44 20 7946 0123' })).toMatchObject({ clientId: lee.id });
  });
});
