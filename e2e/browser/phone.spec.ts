import type { Page, TestInfo } from '@playwright/test';
import { expect, test } from './fixtures';
import { expectFitsViewport, expectNoSeriousViolations, keepScreenshot } from './page-checks';
import { clientTexted, database } from './support';

/**
 * The inbox on a phone (390×844, a touch screen honouring the viewport meta): every tool reachable
 * from the tab bar — views, the conversation list, the conversation, the client's details — and
 * the settings pages, each checked for width (nothing past the screen's edge), for axe-core's
 * serious violations, and kept as a screenshot in the report.
 */
test.use({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });

/** `axe`: false where the desk's accessibility spec already runs axe on the same markup. */
async function check(page: Page, testInfo: TestInfo, tool: string, { axe = true } = {}) {
  await expectFitsViewport(page, tool);
  if (axe) await expectNoSeriousViolations(page, `${tool} on a phone`);
  await keepScreenshot(page, testInfo, `phone ${tool}`);
}

/** The element's left and right edges are on the screen (it may be further down the page). */
async function expectAcrossScreen(page: Page, locator: ReturnType<Page['locator']>) {
  const box = (await locator.boundingBox())!;
  expect(box.x).toBeGreaterThanOrEqual(0);
  expect(box.x + box.width).toBeLessThanOrEqual(page.viewportSize()!.width);
}

test('every tool on a phone: views, list, conversation, client, settings, nothing cut off', async ({
  page,
  tenant,
  request,
}, testInfo) => {
  test.slow(); // seven axe runs
  const { client } = await clientTexted(request, tenant.businessId, 'Ana Lopez', 'Can I move my appointment to Friday?');
  // A location with a long name and a label, for the views and the quiet hours to wrap.
  const sql = database();
  await sql`insert into locations (business_id, name, timezone)
            values (${tenant.businessId}, 'Bloom Hair Studio - Hayes Valley and Lower Haight', 'America/Los_Angeles')`;
  await sql`update conversations set label = 'VIP' where business_id = ${tenant.businessId}`;
  await sql.end();

  await page.goto(tenant.loginUrl);
  await page.goto('/inbox');
  const sections = page.getByRole('navigation', { name: 'Inbox sections' });
  const row = page.getByRole('option', { name: /^Ana Lopez/ });
  await expect(row).toBeVisible();

  // The top bar: the business's whole name, a search field a thumb can use, New message and Settings.
  const business = page.getByRole('heading', { level: 1, name: tenant.businessName });
  await expect(business).toBeInViewport();
  expect(await business.evaluate((h) => h.scrollWidth <= h.clientWidth)).toBe(true);
  const search = page.locator('header [role=search] input').first();
  expect((await search.boundingBox())!.width).toBeGreaterThanOrEqual(180); // half the screen, not 18px
  await expect(page.getByRole('button', { name: 'New message' })).toBeInViewport();
  await page.getByText('Settings', { exact: true }).click();
  for (const link of ['Saved replies', 'Quiet hours', 'Webhooks']) {
    await expect(page.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: link })).toBeInViewport();
  }
  await check(page, testInfo, 'conversation list');
  await page.getByText('Settings', { exact: true }).click();

  // The bell's panel spans the screen under the top bar.
  const bell = page.getByRole('button', { name: /^Notifications,/ });
  await expect(bell).toBeInViewport();
  await bell.click();
  const notifications = page.getByRole('region', { name: 'Notifications' });
  await expect(notifications.getByRole('button', { name: 'Mark all read' })).toBeInViewport();
  await expectAcrossScreen(page, notifications);
  await check(page, testInfo, 'notifications');
  await bell.click();

  // Views: statuses, Mine, Unread, labels; choosing one shows its list.
  await sections.getByRole('button', { name: 'Views' }).click();
  const views = page.getByRole('navigation', { name: 'Views' });
  await expect(views.getByRole('button', { name: /^Open/ })).toBeInViewport();
  await expect(views.getByRole('button', { name: /^Unread/ })).toBeVisible();
  await expect(views.getByRole('group', { name: 'Label' }).getByRole('button', { name: /^VIP/ })).toBeVisible();
  await check(page, testInfo, 'views');
  await views.getByRole('button', { name: /^Mine/ }).click();
  await expect(page.getByText('No conversations here.')).toBeVisible();
  await sections.getByRole('button', { name: 'Views' }).click();
  await views.getByRole('button', { name: /^All/ }).click();
  await expect(row).toBeVisible();

  // The conversation: header tools, timeline and composer on the screen.
  await row.click();
  await expect(page.getByRole('log', { name: 'Messages' })).toContainText('Can I move my appointment');
  await expect(page.getByRole('button', { name: 'Resolve' })).toBeInViewport();
  await expect(page.getByRole('textbox', { name: 'SMS message' })).toBeInViewport();
  await expect(sections.getByRole('button', { name: 'Messages' })).toHaveAttribute('aria-current', 'true');
  await check(page, testInfo, 'conversation');

  // The client: number, consent, opt-out.
  await sections.getByRole('button', { name: 'Client' }).click();
  const panel = page.getByRole('complementary', { name: 'Client details' });
  await expect(panel).toContainText(client.phone);
  await expect(panel.getByTestId('sms-consent')).toHaveText('Subscribed');
  await expect(panel.getByRole('button', { name: /Opt out/ }).first()).toBeInViewport();
  await check(page, testInfo, 'client');

  // Back to the messages by their tab, to the list by the header's arrow.
  await sections.getByRole('button', { name: 'Messages' }).click();
  await page.getByRole('button', { name: 'Back to conversations' }).click();
  await expect(row).toBeInViewport();
  await expect(sections.getByRole('button', { name: 'Client' })).toBeDisabled();

  // Settings pages fit, with their Save buttons on the screen; a location's window saves from a phone.
  await page.goto('/settings/quiet-hours');
  const location = page.getByTestId('location-window');
  await expect(location).toContainText("The business's window");
  for (const save of await page.getByRole('button', { name: 'Save', exact: true }).all()) await expectAcrossScreen(page, save);
  await check(page, testInfo, 'quiet hours');
  await location.getByLabel('From').fill('10:00');
  await location.getByRole('button', { name: 'Save', exact: true }).click();
  await expect(location).toContainText('Own window 10:00');

  await page.goto('/settings/saved-replies');
  await expectAcrossScreen(page, page.getByRole('button', { name: 'Save reply' }));
  await check(page, testInfo, 'saved replies', { axe: false });

  await page.goto('/settings/webhooks');
  await expectAcrossScreen(page, page.getByRole('button', { name: 'Add address' }));
  await check(page, testInfo, 'webhooks', { axe: false });

  await page.goto('/settings/notifications');
  await expectAcrossScreen(page, page.getByRole('checkbox', { name: 'Assigned to me: Email' }));
  await expectAcrossScreen(
    page,
    page.getByRole('form', { name: 'My notifications' }).getByRole('button', { name: 'Save', exact: true }),
  );
  // The business's email settings, below.
  await expectAcrossScreen(
    page,
    page.getByRole('form', { name: 'Email notifications' }).getByRole('button', { name: 'Save', exact: true }),
  );
  await check(page, testInfo, 'notification settings');
});
