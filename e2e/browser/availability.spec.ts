import type { APIRequestContext, Page } from '@playwright/test';
import { expect, test } from './fixtures';
import { addStaff, clientTexted } from './support';

/**
 * Who is available (docs/api.md#staff-availability) in the inbox: the top bar's Away switch keeps
 * its state across a reload; the team's states (Away, Off shift) show in the top bar and group the
 * assignee picker; a colleague coming back through the API shows without a reload (the live
 * stream's `staff.updated`). Test businesses are in UTC and set no opening hours: everyone without
 * a schedule of their own is on shift around the clock.
 */

// `connection: close`: no idle socket is left for a later call, long after, to find closed by the server.
const platform = { 'x-api-key': process.env.PLATFORM_API_KEY!, connection: 'close' };
const WEEKDAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];

async function setAway(request: APIRequestContext, businessId: number, staffId: number, away: boolean) {
  const res = await request.put(`/api/v1/businesses/${businessId}/staffs/${staffId}/availability`, {
    headers: platform,
    data: { away },
  });
  expect(res.ok()).toBe(true);
}

const awaySwitch = (page: Page) => page.getByRole('switch', { name: 'Away' });
const team = (page: Page) => page.getByTestId('team-states');

test('toggle Away in the top bar, keep it after a reload, and see colleagues’ states live', async ({ page, tenant, request }) => {
  await clientTexted(request, tenant.businessId, 'Archie Olson', 'Can I book a trim on Friday?');
  const cora = await addStaff(tenant.businessId, 'Cora Away');
  const nell = await addStaff(tenant.businessId, 'Nell Nights');
  await setAway(request, tenant.businessId, cora, true);
  // Nell works one hour two days from now (UTC): off shift whenever this runs.
  const day = WEEKDAYS[(new Date().getUTCDay() + 2) % 7]!;
  const schedule = await request.put(`/api/v1/businesses/${tenant.businessId}/staffs/${nell}/schedule`, {
    headers: platform,
    data: { weekly: { [day]: [{ start: '09:00', end: '10:00' }] } },
  });
  expect(schedule.ok()).toBe(true);

  await page.goto(tenant.loginUrl);
  await expect(awaySwitch(page)).toHaveAttribute('aria-checked', 'false');
  await expect(page.getByTestId('my-availability')).toHaveText('Available');

  await page.getByText('Team', { exact: false }).click();
  await expect(team(page).getByRole('listitem').filter({ hasText: 'Cora Away' })).toContainText('Away');
  await expect(team(page).getByRole('listitem').filter({ hasText: 'Nell Nights' })).toContainText('Off shift');

  // The assignee picker groups staff by state.
  await page.getByRole('option', { name: /^Archie Olson/ }).click();
  const picker = page.getByLabel('Assignee');
  await expect(picker.locator('optgroup[label="Away"] option')).toHaveText(['Cora Away']);
  await expect(picker.locator('optgroup[label="Off shift"] option')).toHaveText(['Nell Nights']);
  await expect(picker.locator('optgroup[label="Available"] option')).toHaveText([`${tenant.staffName} (me)`]);

  // Going Away: the switch by keyboard, the state, and after a reload.
  await awaySwitch(page).focus();
  await page.keyboard.press('Enter');
  await expect(awaySwitch(page)).toHaveAttribute('aria-checked', 'true');
  await expect(page.getByTestId('my-availability')).toHaveText('Away');
  await page.reload();
  await expect(awaySwitch(page)).toHaveAttribute('aria-checked', 'true');
  await expect(page.getByTestId('my-availability')).toHaveText('Away');

  // Cora comes back through the API: the open inbox shows it without a reload.
  await page.getByText('Team', { exact: false }).click();
  await setAway(request, tenant.businessId, cora, false);
  await expect(team(page).getByRole('listitem').filter({ hasText: 'Cora Away' })).toContainText('Available');

  // Back from Away.
  await awaySwitch(page).click();
  await expect(page.getByTestId('my-availability')).toHaveText('Available');
});

test('a staff member gets a schedule of their own on the Staff schedules page', async ({ page, tenant }) => {
  await page.goto(tenant.loginUrl);
  await page.goto('/settings/staff-schedules');
  await expect(page.getByTestId('shift-status')).toContainText('On shift, around the clock');
  await page.getByLabel('Their own schedule').check();

  const form = page.getByRole('form', { name: `${tenant.staffName} opening hours` });
  const monday = form.getByRole('group', { name: 'Monday, interval 1' });
  await monday.getByLabel('From', { exact: true }).fill('22:00');
  await monday.getByLabel('Until', { exact: true }).fill('06:00');
  await expect(monday.getByText('next day')).toBeVisible();
  await form.getByRole('button', { name: `Save ${tenant.staffName}'s hours` }).click();
  await expect(form.getByRole('status')).toHaveText('Saved.');

  await page.reload();
  await expect(page.getByLabel('Their own schedule')).toBeChecked();
  const stored = page.getByRole('form', { name: `${tenant.staffName} opening hours` });
  await expect(stored.getByRole('group', { name: 'Monday, interval 1' }).getByLabel('Until', { exact: true })).toHaveValue(
    '06:00',
  );

  // The label names what they follow once saved (here, with no hours set anywhere: "the opening hours").
  await page.getByLabel(/Follow their/).check();
  await expect(page.getByLabel(/Follow the opening hours/)).toBeChecked();
  await expect(page.getByTestId('shift-status')).toContainText('On shift, around the clock');
});
