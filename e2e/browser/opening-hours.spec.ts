import { expect, test } from './fixtures';

/**
 * Opening hours (docs/api.md#opening-hours) in the inbox: the business's week gets an overnight
 * interval and a holiday; an overlap is refused in words first; after a save and a reload the page
 * shows what was stored, and the API's clock answers from it. Test businesses are in UTC.
 */
test('set hours with an overnight interval and a holiday, save, reload, see them', async ({ page, tenant, request }) => {
  await page.goto(tenant.loginUrl);
  await page.goto('/settings/opening-hours');
  await expect(page.getByTestId('opening-status')).toContainText('Open now, around the clock');

  const form = page.getByRole('form', { name: 'Business opening hours' });
  const save = form.getByRole('button', { name: "Save the business's hours" });
  // The starting point is weekdays 09:00–17:00; Friday gets a second interval, first overlapping.
  await form.getByRole('button', { name: 'Add an interval on Friday' }).click();
  const late = form.getByRole('group', { name: 'Friday, interval 2' });
  await late.getByLabel('From', { exact: true }).fill('16:00');
  await late.getByLabel('Until', { exact: true }).fill('02:00');
  await expect(late.getByText('next day')).toBeVisible();
  await save.click();
  await expect(form.getByRole('alert')).toContainText('Friday, interval 2: overlaps Friday 09:00–17:00');

  await late.getByLabel('From', { exact: true }).fill('22:00');
  await form.getByRole('button', { name: 'Add a date' }).click();
  const holiday = form.getByRole('group', { name: 'Date 1' });
  await holiday.getByLabel('Date', { exact: true }).fill('2026-12-25');
  await holiday.getByLabel('Name', { exact: true }).fill('Christmas Day');
  await expect(holiday.getByLabel('Closed all day')).toBeChecked();
  await save.click();
  await expect(form.getByRole('status')).toHaveText('Saved.');
  await expect(form.getByRole('alert')).toHaveCount(0);

  await page.reload();
  const stored = page.getByRole('form', { name: 'Business opening hours' });
  const night = stored.getByRole('group', { name: 'Friday, interval 2' });
  await expect(night.getByLabel('From', { exact: true })).toHaveValue('22:00');
  await expect(night.getByLabel('Until', { exact: true })).toHaveValue('02:00');
  await expect(night.getByText('next day')).toBeVisible();
  await expect(stored.getByRole('group', { name: 'Saturday, interval 1' })).toHaveCount(0);
  const christmas = stored.getByRole('group', { name: 'Date 1' });
  await expect(christmas.getByLabel('Date', { exact: true })).toHaveValue('2026-12-25');
  await expect(christmas.getByLabel('Name', { exact: true })).toHaveValue('Christmas Day');
  await expect(christmas.getByLabel('Closed all day')).toBeChecked();

  // The clock answers from the stored hours: open on Friday night past midnight, closed on Christmas night.
  const statusAt = async (at: string) => {
    const res = await request.get(`/api/v1/businesses/${tenant.businessId}/opening-hours?at=${at}`, {
      headers: { 'x-api-key': process.env.PLATFORM_API_KEY! },
    });
    expect(res.ok()).toBe(true);
    return ((await res.json()) as { status: Record<string, unknown> }).status;
  };
  expect(await statusAt('2026-12-19T01:00:00Z')).toMatchObject({ open: true, next_closing: '2026-12-19T02:00:00.000Z' });
  expect(await statusAt('2026-12-25T23:00:00Z')).toMatchObject({ open: false, next_opening: '2026-12-28T09:00:00.000Z' });
});
