import { createContext } from '@/server/trpc/init';
import { createCaller } from '@/server/trpc/root';

/** The inbox's tRPC procedures as a signed-in staff member calls them (their session cookie, a same-origin request). */
export async function staffCaller(sessionToken: string) {
  const req = new Request('http://localhost:3000/api/trpc/x', {
    method: 'POST',
    headers: { host: 'localhost:3000', cookie: `session=${sessionToken}`, origin: 'http://localhost:3000' },
  });
  return createCaller(await createContext({ req }));
}
