import { createClient, createConversation, createSmsNumber, createTenant } from '@/server/testing/factories';
import type { Business } from './load';

/**
 * The system test's tenants: businesses with an SMS number, an API key, clients with a phone and an
 * email and their conversations (straight into the database), and browser sessions minted through
 * the real door — `POST /auth/token`, then the one-time login link — through the balancer.
 */
export async function seed(
  baseUrl: string,
  platformKey: string,
  counts: { businesses: number; clients: number; sessions: number },
): Promise<Business[]> {
  const businesses: Business[] = [];
  const owners = new Map<number, number>();
  for (let i = 0; i < counts.businesses; i++) {
    const tenant = await createTenant();
    const number = await createSmsNumber(tenant.business.id);
    const clients: Business['clients'] = [];
    for (let c = 0; c < counts.clients; c++) {
      const client = await createClient(tenant.business.id, {
        phoneNumber: `+1646${String(i).padStart(2, '0')}${String(c).padStart(5, '0')}`,
        email: `client${i}.${c}@system.test`,
      });
      const conversation = await createConversation(tenant.business.id, client.id);
      clients.push({ id: client.id, phone: client.phoneNumber!, email: client.email!, conversationId: conversation.id });
    }
    owners.set(tenant.business.id, tenant.owner.id);
    businesses.push({
      id: tenant.business.id,
      apiKey: tenant.apiKey,
      smsNumber: number.phoneNumber,
      fromEmail: tenant.business.fromEmail!,
      clients,
      cookies: [],
    });
  }
  const jobs = Array.from({ length: counts.sessions }, (_, i) => businesses[i % businesses.length]!);
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < jobs.length) {
        const b = jobs[next++]!;
        b.cookies.push(await mintSession(baseUrl, platformKey, b.id, owners.get(b.id)!));
      }
    }),
  );
  return businesses;
}

async function mintSession(baseUrl: string, platformKey: string, businessId: number, staffId: number): Promise<string> {
  const res = await fetch(`${baseUrl}/api/v1/auth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': platformKey },
    body: JSON.stringify({ business_id: businessId, staff_id: staffId }),
  });
  if (!res.ok) throw new Error(`auth/token answered ${res.status}: ${await res.text()}`);
  const login = new URL(((await res.json()) as { login_url: string }).login_url);
  const redeemed = await fetch(`${baseUrl}${login.pathname}${login.search}`, { redirect: 'manual' });
  const cookie = redeemed.headers
    .getSetCookie()
    .map((c) => c.match(/^session=([^;]+)/)?.[1])
    .find(Boolean);
  if (!cookie) throw new Error(`the login link answered ${redeemed.status} without a session cookie`);
  return decodeURIComponent(cookie);
}
