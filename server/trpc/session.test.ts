import { describe, expect, it } from 'vitest';
import { createTenant } from '@/server/testing/factories';
import { createContext } from './init';
import { createCaller } from './root';

async function callerFor(headers: Record<string, string>) {
  const req = new Request('http://localhost:3000/api/trpc/x', {
    method: 'POST',
    headers: { host: 'localhost:3000', ...headers },
  });
  return createCaller(await createContext({ req }));
}

describe('tRPC session router', () => {
  it('me returns the signed-in staff member and business', async () => {
    const { business, owner, sessionToken } = await createTenant();
    const trpc = await callerFor({ cookie: `session=${sessionToken}` });
    await expect(trpc.session.me()).resolves.toMatchObject({
      staffId: owner.id,
      staffName: owner.name,
      businessId: business.id,
      businessName: business.name,
    });
  });

  it('refuses callers without a valid session', async () => {
    const anonymous = await callerFor({});
    await expect(anonymous.session.me()).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
    const bogus = await callerFor({ cookie: 'session=forged' });
    await expect(bogus.session.me()).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
  });

  it('cookie mutations need a same-origin Origin (CSRF); signOut then ends the session', async () => {
    const { sessionToken } = await createTenant();
    const crossSite = await callerFor({ cookie: `session=${sessionToken}`, origin: 'https://evil.example' });
    await expect(crossSite.session.signOut()).rejects.toMatchObject({ code: 'FORBIDDEN' });
    const sameSite = await callerFor({ cookie: `session=${sessionToken}`, origin: 'http://localhost:3000' });
    await expect(sameSite.session.signOut()).resolves.toEqual({ expired: 1 });
    const after = await callerFor({ cookie: `session=${sessionToken}` });
    await expect(after.session.me()).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
  });
});
