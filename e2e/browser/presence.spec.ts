import type { Page } from '@playwright/test';
import { expect, test } from './fixtures';
import { addStaff, clientTexted } from './support';

/**
 * Presence (docs/api.md#live-events): two staff of one business, each in a browser context of their
 * own. B sees A's avatar on the conversation's row and in its header while A has it open, "Maya is
 * replying…" while A types, and neither once A clears the draft or leaves; nobody sees themselves.
 */

const row = (page: Page, name: string) => page.getByRole('option', { name: new RegExp(`^${name}`) });
const header = (page: Page) => page.getByRole('main').locator('header');

test('two staff see each other viewing and typing, and it goes when one stops and leaves', async ({
  browser,
  page,
  tenant,
  request,
}) => {
  await clientTexted(request, tenant.businessId, 'Ana Lopez', 'Can I move my appointment?');
  const me = tenant.staffName.split(' ')[0]!; // "Maya"
  const ben = await addStaff(tenant.businessId, 'Ben Colorist');
  const login = await request.post('/api/v1/auth/token', {
    headers: { 'x-api-key': process.env.PLATFORM_API_KEY! },
    data: { business_id: tenant.businessId, staff_id: ben },
  });
  expect(login.ok()).toBe(true);

  // A (Maya, the owner) opens the conversation.
  await page.goto(tenant.loginUrl);
  await row(page, 'Ana Lopez').click();
  await expect(header(page).getByRole('heading', { level: 2 })).toHaveText('Ana Lopez');

  // B (Ben) sees her on the row without opening it, then in the header once he opens it.
  const benContext = await browser.newContext();
  const b = await benContext.newPage();
  await b.goto(((await login.json()) as { login_url: string }).login_url);
  const onRow = row(b, 'Ana Lopez').getByTestId('presence');
  await expect(onRow.getByRole('img')).toHaveAccessibleName(`${tenant.staffName} is viewing`);
  const [first, ...rest] = tenant.staffName.split(' ');
  await expect(onRow).toHaveText(`${first![0]}${rest.at(-1)![0]}`.toUpperCase());
  await row(b, 'Ana Lopez').click();
  const inHeader = header(b).getByTestId('presence');
  await expect(inHeader.getByRole('img')).toHaveAccessibleName(`${tenant.staffName} is viewing`);
  // And Maya now sees Ben; neither sees themselves.
  await expect(header(page).getByTestId('presence').getByRole('img')).toHaveAccessibleName('Ben Colorist is viewing');

  // Maya types a reply: Ben reads "Maya is replying…"; she clears it: the line goes.
  const composer = page.getByRole('textbox', { name: 'SMS message' });
  await composer.pressSequentially('Sure, which day suits you?', { delay: 20 });
  await expect(b.getByTestId('presence-typing')).toHaveText(`${me} is replying…`);
  await expect(inHeader.getByRole('img')).toHaveAccessibleName(`${tenant.staffName} is replying`);
  await composer.fill('');
  await expect(b.getByTestId('presence-typing')).toHaveText('');
  await expect(inHeader.getByRole('img')).toHaveAccessibleName(`${tenant.staffName} is viewing`);

  // A note is "writing a note…".
  await page.getByRole('tab', { name: 'Note' }).click();
  await page.getByRole('textbox', { name: 'Internal note' }).pressSequentially('Prefers mornings', { delay: 20 });
  await expect(b.getByTestId('presence-typing')).toHaveText(`${me} is writing a note…`);

  // Maya closes her tab: Ben sees her go (the page's last beat says so; expiry would within 30 s).
  await page.close();
  await expect(inHeader).toHaveCount(0);
  await expect(row(b, 'Ana Lopez').getByTestId('presence')).toHaveCount(0);
  await benContext.close();
});
