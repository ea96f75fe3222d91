import { and, eq } from 'drizzle-orm';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { db } from '@/server/db/client';
import { messages } from '@/db/schema';
import { createClient, createConversation, createMessage, createSmsNumber, createTenant } from '@/server/testing/factories';
import { createContext } from './init';
import { createCaller } from './root';

// The gating tests switch providers by overriding what env() answers (every module reads it).
const envOverride = vi.hoisted(() => ({ current: {} as Record<string, unknown> }));
vi.mock('@/server/env', async (importOriginal) => {
  const actual = await importOriginal<typeof import('@/server/env')>();
  return { ...actual, env: () => ({ ...actual.env(), ...envOverride.current }) };
});
afterEach(() => {
  envOverride.current = {};
});

async function callerFor(token: string) {
  const req = new Request('http://localhost:3000/api/trpc/x', {
    method: 'POST',
    headers: { host: 'localhost:3000', cookie: `session=${token}`, origin: 'http://localhost:3000' },
  });
  return createCaller(await createContext({ req }));
}

/** A business with an SMS number, a client, their conversation and one SMS we sent them. */
async function phoneSetup() {
  const t = await createTenant();
  const number = await createSmsNumber(t.business.id);
  const client = await createClient(t.business.id, { name: 'Ava Stone' });
  const conv = await createConversation(t.business.id, client.id);
  await createMessage(conv, {
    content: 'See you Thursday at 3?',
    status: 'delivered',
    fromAddress: number.phoneNumber,
    toAddress: client.phoneNumber,
    sentAt: new Date(Date.now() - 60_000),
  });
  return { t, client };
}

const inboundOf = (businessId: number, channel: 'sms' | 'email') =>
  db
    .select()
    .from(messages)
    .where(and(eq(messages.businessId, businessId), eq(messages.channel, channel), eq(messages.direction, 'inbound')));

describe('tRPC sandbox router: the sandbox exists only with the sandbox providers', () => {
  it('the procedures answer for the staff member’s business with the sandbox providers', async () => {
    const { t, client } = await phoneSetup();
    const trpc = await callerFor(t.sessionToken);
    expect((await trpc.sandbox.clients({})).clients.map((c) => c.name)).toEqual(['Ava Stone']);
    expect((await trpc.sandbox.thread({ clientId: client.id })).messages).toHaveLength(1);
    expect((await trpc.sandbox.mailbox({ clientId: client.id })).emails).toEqual([]);
    const other = await createTenant();
    await expect((await callerFor(other.sessionToken)).sandbox.thread({ clientId: client.id })).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
  });

  it('with Twilio or SMTP configured every procedure is NOT_FOUND and nothing is signed', async () => {
    const { t, client } = await phoneSetup();
    const trpc = await callerFor(t.sessionToken);
    for (const override of [{ smsProvider: 'twilio' }, { emailProvider: 'smtp' }]) {
      envOverride.current = override;
      await expect(trpc.sandbox.clients({})).rejects.toMatchObject({ code: 'NOT_FOUND' });
      await expect(trpc.sandbox.thread({ clientId: client.id })).rejects.toMatchObject({ code: 'NOT_FOUND' });
      await expect(trpc.sandbox.mailbox({ clientId: client.id })).rejects.toMatchObject({ code: 'NOT_FOUND' });
      await expect(trpc.sandbox.replySms({ clientId: client.id, body: 'hi' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
      await expect(trpc.sandbox.replyEmail({ clientId: client.id, subject: 's', text: 'hi' })).rejects.toMatchObject({
        code: 'NOT_FOUND',
      });
    }
    expect(await inboundOf(t.business.id, 'sms')).toHaveLength(0);
  });

  it('in production without SANDBOX_ENABLED=true every procedure is NOT_FOUND, even on the sandbox providers', async () => {
    const { t, client } = await phoneSetup();
    const trpc = await callerFor(t.sessionToken);
    envOverride.current = { sandboxAllowed: false };
    await expect(trpc.sandbox.clients({})).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(trpc.sandbox.replySms({ clientId: client.id, body: 'hi' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(await inboundOf(t.business.id, 'sms')).toHaveLength(0);
  });

  it('without a session the procedures are UNAUTHORIZED', async () => {
    const trpc = createCaller(await createContext({ req: new Request('http://localhost:3000/api/trpc/x') }));
    await expect(trpc.sandbox.clients({})).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
  });
});
