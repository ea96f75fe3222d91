import { expect, test } from './fixtures';
import { clientTexted } from './support';

/**
 * Security headers as the browser meets them: the inbox works under its nonce-based CSP (no
 * violation while it loads and a conversation opens), refuses to be framed by another origin, and
 * the API answers carry a policy that loads nothing.
 */
test('the inbox runs under its CSP with no violation, and carries the security headers', async ({ page, tenant, request }) => {
  const violations: string[] = [];
  page.on('console', (m) => {
    if (/Content Security Policy|Refused to (load|execute|apply|connect)/i.test(m.text())) violations.push(m.text());
  });
  await clientTexted(request, tenant.businessId, 'Ana Lopez', 'Is Friday free?');

  const response = await page.goto(tenant.loginUrl);
  await expect(page.getByTestId('signed-in-as')).toBeVisible();
  const headers = response!.headers();
  expect(headers['content-security-policy']).toMatch(/script-src 'self' 'nonce-[A-Za-z0-9+/=]+' 'strict-dynamic'/);
  expect(headers['content-security-policy']).toContain("frame-ancestors 'none'");
  expect(headers['content-security-policy']).toContain("object-src 'none'");
  expect(headers['x-frame-options']).toBe('DENY');
  expect(headers['x-content-type-options']).toBe('nosniff');
  expect(headers['referrer-policy']).toBe('strict-origin-when-cross-origin');
  expect(headers['permissions-policy']).toContain('microphone=(self)');

  await page.getByRole('option', { name: /^Ana Lopez/ }).click();
  await expect(page.getByRole('log', { name: 'Messages' }).getByText('Is Friday free?')).toBeVisible();
  expect(violations).toEqual([]);
});

test('another origin cannot frame the sign-in page (or any other)', async ({ page }) => {
  // An attacker's page (here about:blank, an opaque origin) frames ours: the browser refuses.
  await page.setContent(`<iframe id="victim" src="${process.env.PUBLIC_BASE_URL}/login" width="600" height="400"></iframe>`);
  await expect.poll(() => page.frames().length).toBe(2);
  const child = page.frames().find((f) => f !== page.mainFrame())!;
  await child.waitForLoadState('load');
  // Framed, the page would show its "Sign in" heading; refused, the frame holds the browser's error page.
  const text = await child.evaluate(() => document.body?.innerText ?? '').catch(() => '');
  expect(text).not.toContain('Open the sign-in link');
  expect(child.url()).not.toMatch(/\/login$/);
});

test('API answers load nothing and the login page sends no Referer', async ({ request }) => {
  const health = await request.get('/api/v1/health');
  expect(health.headers()['content-security-policy']).toBe("default-src 'none'; frame-ancestors 'none'");
  expect(health.headers()['x-content-type-options']).toBe('nosniff');
  const login = await request.get('/login', { maxRedirects: 0 });
  expect(login.headers()['referrer-policy']).toBe('no-referrer');
});
