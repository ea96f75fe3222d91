import { expect, test } from './fixtures';

test('a login link signs the staff member in and lands on the inbox', async ({ page, tenant }) => {
  await page.goto(tenant.loginUrl);
  await expect(page).toHaveURL(/\/inbox$/);
  await expect(page.getByTestId('signed-in-as')).toHaveText(`Signed in as ${tenant.staffName}`);
  await expect(page.getByRole('heading', { name: tenant.businessName })).toBeVisible();
  const cookies = await page.context().cookies();
  const session = cookies.find((c) => c.name === 'session');
  expect(session?.httpOnly).toBe(true);
  expect(session?.sameSite).toBe('Lax');
  await page.screenshot({ path: test.info().outputPath('inbox-signed-in.png') });
});

test('the inbox without a session sends the visitor to sign in', async ({ page }) => {
  await page.goto('/inbox');
  await expect(page).toHaveURL(/\/login$/);
  await expect(page.getByRole('heading', { name: 'Sign in' })).toBeVisible();
});

test('signing out ends the session, and a login link works only once', async ({ page, tenant }) => {
  await page.goto(tenant.loginUrl);
  await expect(page.getByTestId('signed-in-as')).toBeVisible();
  await page.getByRole('button', { name: 'Sign out' }).click();
  await expect(page).toHaveURL(/\/login$/);
  await page.goto(tenant.loginUrl);
  await expect(page.getByRole('heading', { name: 'This sign-in link was already used or has expired' })).toBeVisible();
  // A new link signs in again.
  await page.goto(await tenant.newLoginUrl());
  await expect(page.getByTestId('signed-in-as')).toBeVisible();
});

test('a session ended elsewhere signs the open inbox out: the live stream closes and says so', async ({ page, tenant }) => {
  await page.goto(tenant.loginUrl);
  await expect(page.getByTestId('signed-in-as')).toBeVisible();
  // The platform expires the staff member's session (here straight in the database, as a revocation would).
  const { createSql } = await import('../../db/connect');
  const sql = createSql(process.env.E2E_DATABASE_URL!, { max: 1 });
  await sql`update sessions set revoked_at = now() where staff_id = ${tenant.staffId}`;
  await sql.end();
  await expect(page.getByRole('alert').filter({ hasText: 'Signed out' })).toContainText('Signed out: this session has ended', {
    timeout: 15_000,
  });
});
