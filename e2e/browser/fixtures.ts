import { test as base } from '@playwright/test';

/**
 * Each test makes its own business, owner and login link through the public REST API (platform
 * key), rows created in the e2e server's database by a direct connection.
 */
type Tenant = {
  businessId: number;
  staffId: number;
  staffName: string;
  businessName: string;
  /** A one-time login link (each works once: a second browser context needs newLoginUrl()). */
  loginUrl: string;
  newLoginUrl: () => Promise<string>;
};

export const test = base.extend<{ tenant: Tenant }>({
  tenant: async ({ request }, use) => {
    const { createSql } = await import('../../db/connect');
    const sql = createSql(process.env.E2E_DATABASE_URL!, { max: 1 });
    const suffix = Math.random().toString(36).slice(2, 8);
    const businessName = `Bloom Studio ${suffix}`;
    const staffName = `Maya Owner ${suffix}`;
    // Sending all day: no test but the quiet hours one may depend on the hour it runs at.
    const [business] = await sql<{ id: number }[]>`
      insert into businesses (name, sending_window_start, sending_window_end) values (${businessName}, 0, 1440) returning id`;
    const [member] = await sql<{ id: number }[]>`
      insert into staff (business_id, name, role) values (${business!.id}, ${staffName}, 'owner') returning id`;
    await sql.end();
    const newLoginUrl = async () => {
      const res = await request.post('/api/v1/auth/token', {
        headers: { 'x-api-key': process.env.PLATFORM_API_KEY! },
        data: { business_id: business!.id, staff_id: member!.id },
      });
      if (!res.ok()) throw new Error(`auth/token answered ${res.status()}: ${await res.text()}`);
      return ((await res.json()) as { login_url: string }).login_url;
    };
    await use({
      businessId: business!.id,
      staffId: member!.id,
      staffName,
      businessName,
      loginUrl: await newLoginUrl(),
      newLoginUrl,
    });
  },
});

export { expect } from '@playwright/test';
