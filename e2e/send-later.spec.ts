import { expect, test } from './fixtures';
import { addClient, equipBusiness, inboundSms } from './support';

/**
 * Send later (docs/api.md#send-later) in the inbox: a text scheduled with a quick pick shows in the
 * timeline as scheduled with its time, Cancel and Edit; Cancel makes it canceled, never sent.
 */
test('schedule a text for tomorrow 9:00 from the composer, see it scheduled, cancel it', async ({ page, tenant, request }) => {
  const business = await equipBusiness(tenant.businessId);
  const ana = await addClient(tenant.businessId, 'Ana Lopez');
  await inboundSms(request, ana.phone, business.smsNumber, 'Can you remind me tomorrow?');

  await page.goto(tenant.loginUrl);
  await page.goto('/inbox');
  await page.getByRole('option', { name: /^Ana Lopez/ }).click();
  const composer = page.getByRole('textbox', { name: 'SMS message' });
  await composer.fill('Reminder: your appointment is today at 10:30.');
  await page.getByRole('combobox', { name: 'Send later' }).selectOption({ label: 'Tomorrow 9:00' });
  await expect(page.getByTestId('send-later-summary')).toContainText('Cancel if the client replies first');
  await page.getByRole('button', { name: 'Schedule SMS' }).click();
  await expect(composer).toHaveValue('');

  const scheduled = page.locator('[data-message-type=TEXT]').filter({ hasText: 'Reminder: your appointment' });
  await expect(scheduled.getByTestId('message-status')).toContainText('Scheduled for');
  await expect(scheduled.getByTestId('message-status')).toContainText('9:00');
  await expect(scheduled.getByRole('button', { name: 'Edit' })).toBeVisible();
  await scheduled.getByRole('button', { name: 'Cancel' }).click();
  await expect(scheduled.getByTestId('message-status')).toHaveText('Canceled before it was sent');
});
