import type { Page } from '@playwright/test';
import { expect, test } from './fixtures';
import { expectNoSeriousViolations, focusRing } from './page-checks';
import { clientTexted, inboundSms } from './support';

/**
 * The inbox by keyboard and for assistive technology (docs/architecture.md#the-inbox): `?` lists
 * the shortcuts, the timeline is one Tab stop with arrow keys inside, every focus is visible, and
 * axe-core finds no serious or critical WCAG AA violation in the inbox or the settings pages.
 */

const focused = (page: Page) => page.locator(':focus');

/** Presses Tab until `where` holds the focus; the number of presses (fails past `max`). */
async function tabInto(page: Page, where: string, max: number): Promise<number> {
  for (let presses = 1; presses <= max; presses++) {
    await page.keyboard.press('Tab');
    const ring = await focusRing(page);
    expect(ring?.visible, `focus ring on ${ring?.name}`).toBe(true);
    if (await page.evaluate((selector) => document.activeElement?.closest(selector) !== null, where)) return presses;
  }
  throw new Error(`${where} not reached in ${max} Tab presses`);
}

test('shortcuts on ?, the timeline as one Tab stop, visible focus, and no serious axe violation', async ({
  page,
  tenant,
  request,
}) => {
  test.slow(); // four axe runs and some 60 key presses
  const { business, client } = await clientTexted(request, tenant.businessId, 'Ana Lopez', 'Message 1.');
  // Eight messages: a Tab stop each (their flag buttons), before, between the list and the composer.
  for (let i = 2; i <= 8; i++) await inboundSms(request, client.phone, business.smsNumber, `Message ${i}.`);

  await page.goto(tenant.loginUrl);
  await page.goto('/inbox');
  const row = page.getByRole('option', { name: /^Ana Lopez/ });
  await expect(row).toBeVisible();
  await expectNoSeriousViolations(page, 'the inbox');

  // `?` opens the shortcuts, listed from the table the keys are handled by; Esc closes them.
  await page.keyboard.press('?');
  const shortcuts = page.getByRole('dialog', { name: 'Keyboard shortcuts' });
  await expect(shortcuts).toBeVisible();
  for (const [key, label] of [
    ['j', 'Next conversation'],
    ['e', 'Resolve the open conversation'],
    ['/', 'Search'],
    ['n', 'New message'],
    ['↑', 'Previous / next message'],
  ] as const) {
    await expect(shortcuts.getByRole('row', { name: new RegExp(`${label}$`) })).toContainText(key);
  }
  await expect(shortcuts.getByRole('button', { name: 'Close' })).toBeFocused();
  await expectNoSeriousViolations(page, 'the shortcuts dialog');
  await page.keyboard.press('j'); // no inbox key acts behind the dialog
  await page.keyboard.press('Escape');
  await expect(shortcuts).toBeHidden();
  await expect(page.getByRole('main').getByRole('heading', { level: 2 })).toHaveCount(0);

  // From the list, Tab reaches the timeline (past the header's controls), then the composer.
  await row.click();
  const timeline = page.getByRole('log', { name: 'Messages' });
  await expect(timeline).toContainText('Message 8.');
  await row.focus();
  const toTimeline = await tabInto(page, '[role=log]', 7);
  await expect(focused(page)).toContainText('Message 8.'); // the newest message
  const toComposer = await tabInto(page, 'form[aria-label=Composer]', 2);
  await expect(page.getByRole('tab', { name: 'SMS' })).toBeFocused();
  await page.keyboard.press('Tab');
  await expect(page.getByRole('textbox', { name: 'SMS message' })).toBeFocused();
  test.info().annotations.push({ type: 'Tab presses list → composer', description: String(toTimeline + toComposer + 1) });

  // Inside the timeline: arrows between messages, → to a message's buttons, Esc back to it.
  await page.keyboard.press('Shift+Tab');
  await page.keyboard.press('Shift+Tab');
  await expect(focused(page)).toContainText('Message 8.');
  await page.keyboard.press('ArrowUp');
  await expect(focused(page)).toContainText('Message 7.');
  await page.keyboard.press('Home');
  await expect(focused(page)).toContainText('Message 1.');
  await page.keyboard.press('End');
  await page.keyboard.press('ArrowUp');
  await expect(focused(page)).toContainText('Message 7.');
  await page.keyboard.press('ArrowRight');
  await expect(focused(page)).toHaveAccessibleName('Flag message');
  expect((await focusRing(page))?.visible).toBe(true);
  await page.keyboard.press('Enter');
  await expect(timeline.getByRole('button', { name: 'Unflag message' })).toHaveCount(1);
  await page.keyboard.press('Escape');
  await expect(focused(page)).toContainText('Message 7.');
  await expect(page.getByRole('main').getByRole('heading', { name: 'Ana Lopez' })).toBeVisible(); // Esc did not close it
  // Tab leaves the timeline from the message last used, and comes back to it.
  await page.keyboard.press('Tab');
  await page.keyboard.press('Shift+Tab');
  await expect(focused(page)).toContainText('Message 7.');

  // Every stop on the page, from the top bar's first, shows where the focus is.
  await page.getByRole('button', { name: 'New message' }).focus();
  const stops: string[] = [];
  for (let i = 0; i < 80; i++) {
    const ring = await focusRing(page, true);
    if (!ring || ring.repeat) break;
    stops.push(ring.name);
    expect(ring.visible, `focus ring on ${ring.name} (stop ${stops.length})`).toBe(true);
    await page.keyboard.press('Tab');
  }
  expect(stops.length).toBeGreaterThan(15);
  // With a flagged and an unflagged message on screen (the flag's contrast).
  await expectNoSeriousViolations(page, 'an open conversation');

  for (const [path, title] of [
    ['/settings/quiet-hours', 'Quiet hours'],
    ['/settings/saved-replies', 'Saved replies'],
    ['/settings/webhooks', 'Webhooks'],
    ['/settings/notifications', 'Notifications'],
  ] as const) {
    await page.goto(path);
    await expect(page.getByRole('heading', { level: 1, name: title })).toBeVisible();
    await expect(page.getByRole('button').first()).toBeVisible(); // the page's data has loaded
    await expectNoSeriousViolations(page, `settings: ${title}`);
  }
});
