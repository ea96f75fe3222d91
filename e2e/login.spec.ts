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
