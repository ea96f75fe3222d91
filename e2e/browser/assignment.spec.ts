import type { Page } from '@playwright/test';
import { expect, test } from './fixtures';
import { expectNoSeriousViolations } from './page-checks';
import { addClient, addStaff, equipBusiness, inboundSms } from './support';

/**
 * Auto-assignment (docs/api.md#auto-assignment): round robin turned on in the inbox's settings, the
 * signed-in staff member flips the top bar's Away switch and a new client's conversation goes to
 * their colleague, shown in the inbox with the timeline's line "Automatically assigned to …"; back
 * from Away, the next one is theirs.
 */

const timeline = (page: Page) => page.getByRole('log', { name: 'Messages' });
const awaySwitch = (page: Page) => page.getByRole('switch', { name: 'Away' });

async function setAway(page: Page, away: boolean) {
  await awaySwitch(page).click();
  await expect(awaySwitch(page)).toHaveAttribute('aria-checked', String(away));
  await expect(page.getByTestId('my-availability')).toHaveText(away ? 'Away' : 'Available');
}

test('go Away and see a new conversation go to a colleague', async ({ page, tenant, request }) => {
  test.slow();
  const business = await equipBusiness(tenant.businessId);
  await addStaff(tenant.businessId, 'Ben Carter');
  // Round robin on, on the settings page.
  await page.goto(tenant.loginUrl);
  await page.goto('/settings/assignment');
  const form = page.getByRole('form', { name: 'Business auto-assignment' });
  await expect(form.getByLabel('Policy')).toHaveValue('off');
  await expectNoSeriousViolations(page, 'settings: Auto-assignment');
  await form.getByLabel('Policy').selectOption('round_robin');
  await form.getByRole('button', { name: 'Save' }).click();
  await expect(form.getByRole('status')).toHaveText('Saved.');
  await expect(form.getByLabel('Policy')).toHaveValue('round_robin');
  await page.goto('/inbox');

  await setAway(page, true);
  const rosa = await addClient(tenant.businessId, 'Rosa Díaz');
  await inboundSms(request, rosa.phone, business.smsNumber, 'Hi, can I book a cut on Friday?');
  await page.getByRole('option', { name: /^Rosa Díaz/ }).click();
  await expect(timeline(page)).toContainText('Hi, can I book a cut on Friday?');
  // The worker assigns it; the line and the assignee show without a reload.
  await expect(timeline(page).getByTestId('activity-line').last()).toContainText('Automatically assigned to Ben Carter', {
    timeout: 20_000,
  });
  await expect(page.getByLabel('Assignee').locator('option:checked')).toHaveText('Ben Carter');

  // Back from Away: the next new conversation is theirs (never given one: their turn comes first).
  await setAway(page, false);
  const omar = await addClient(tenant.businessId, 'Omar Haddad');
  await inboundSms(request, omar.phone, business.smsNumber, 'Do you have time today?');
  await page.getByRole('option', { name: /^Omar Haddad/ }).click();
  await expect(timeline(page).getByTestId('activity-line').last()).toContainText(
    `Automatically assigned to ${tenant.staffName}`,
    {
      timeout: 20_000,
    },
  );
});
