import { expect, test } from './fixtures';
import { addClient, database, equipBusiness } from './support';

/**
 * Quiet hours (docs/api.md#quiet-hours) in the inbox: the window is set on the settings page; an
 * automated reminder queued outside it shows in the timeline as held for quiet hours and goes after
 * "Send now" is confirmed; the composer warns before a staff text to a conversation that is not live
 * would wait, and "Send now anyway" sends it at once. The window is placed two hours from now, or
 * ended two hours ago late in the day (UTC, the client's clock here), so it is closed whenever the
 * test runs.
 */
function closedWindow() {
  const now = new Date();
  const minute = now.getUTCHours() * 60 + now.getUTCMinutes();
  // Two hours ahead when the whole hour fits in the day, else ending two hours back: closed now
  // either way, and within 00:00–23:59, which the time inputs can show (from 21:00 UTC the old
  // rule made the end 24:00, which they cannot, and Save stayed enabled).
  const start = minute + 180 <= 1439 ? minute + 120 : minute - 180;
  const clock = (m: number) => `${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`;
  return { start: clock(start), end: clock(start + 60) };
}

test('set the window, see a reminder held for quiet hours, send it now; the composer warns and can override', async ({
  page,
  tenant,
  request,
}) => {
  await equipBusiness(tenant.businessId);
  const ana = await addClient(tenant.businessId, 'Ana Quiet');
  const sql = database();
  await sql`update clients set timezone = 'UTC' where id = ${ana.id}`;
  await sql.end();

  // The settings page: a custom window for the business.
  const window = closedWindow();
  await page.goto(tenant.loginUrl);
  await page.goto('/settings/quiet-hours');
  const form = page.getByRole('form', { name: 'Business sending window' });
  // Test businesses send all day (e2e/browser/fixtures.ts): no preset is that wide.
  await expect(form.getByLabel('Preset')).toHaveValue('custom');
  await form.getByLabel('Preset').selectOption('us_florida');
  await expect(form.getByLabel('Until')).toHaveValue('20:00');
  await form.getByLabel('From').fill(window.start);
  await form.getByLabel('Until').fill(window.end);
  await expect(form.getByLabel('Preset')).toHaveValue('custom');
  await form.getByRole('button', { name: 'Save' }).click();
  await expect(form.getByRole('button', { name: 'Save' })).toBeDisabled();
  await page.reload();
  await expect(page.getByRole('form', { name: 'Business sending window' }).getByLabel('From')).toHaveValue(window.start);

  // An automated reminder over REST is held until the window opens.
  const res = await request.post(`/api/v1/businesses/${tenant.businessId}/sms`, {
    headers: { 'x-api-key': process.env.PLATFORM_API_KEY! },
    data: {
      sender_type: 'system',
      category: 'reminder',
      notification_type: 'appointment_reminder',
      messages: [{ client_id: ana.id, message: 'Reminder: your appointment is tomorrow at 10:30.' }],
    },
  });
  expect(res.ok()).toBe(true);
  expect(((await res.json()) as { message: string }).message).toContain('1 held for quiet hours');

  await page.goto('/inbox');
  await page.getByRole('option', { name: /^Ana Quiet/ }).click();
  const reminder = page.locator('[data-message-type=TEXT]').filter({ hasText: 'Reminder: your appointment' });
  await expect(reminder.getByTestId('message-status')).toContainText('Held for quiet hours: goes');
  const [hour, minute] = window.start.split(':').map(Number) as [number, number];
  await expect(reminder.getByTestId('message-status')).toContainText(
    `${((hour + 11) % 12) + 1}:${String(minute).padStart(2, '0')}`,
  );
  await reminder.getByRole('button', { name: 'Send now' }).click();
  await expect(reminder.getByRole('group', { name: 'Confirm send now' })).toContainText("in the client's quiet hours?");
  await reminder.getByRole('button', { name: 'Yes, send now' }).click();
  await expect(reminder.getByTestId('message-status')).not.toContainText('Held for quiet hours');
  await expect(reminder.getByTestId('message-status')).toContainText(/Sent|Delivered|Queued|Sending/);

  // The client has not written: a staff text would wait too, and the composer says so.
  const composer = page.getByRole('textbox', { name: 'SMS message' });
  await composer.fill('Are you still coming tomorrow?');
  await expect(page.getByTestId('quiet-hours-notice')).toContainText('Quiet hours');
  // The button says when it will go: when the client's window opens.
  await page.getByRole('button', { name: /^Send (today )?at / }).click();
  await expect(composer).toHaveValue('');
  const held = page.locator('[data-message-type=TEXT]').filter({ hasText: 'Are you still coming' });
  await expect(held.getByTestId('message-status')).toContainText('Held for quiet hours');

  await composer.fill('Sorry for the late text: we open at 9.');
  await page.getByLabel("Send now anyway, in the client's quiet hours").check();
  await page.getByRole('button', { name: 'Send', exact: true }).click();
  const urgent = page.locator('[data-message-type=TEXT]').filter({ hasText: 'Sorry for the late text' });
  await expect(urgent.getByTestId('message-status')).toContainText(/Sent|Delivered|Queued|Sending/);
});
