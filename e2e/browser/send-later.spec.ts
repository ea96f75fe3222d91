import { expect, test } from './fixtures';
import { clientTexted, database } from './support';
import { fromLocalInput } from '../../server/shared/zoned-time';

/**
 * Send later (docs/api.md#send-later) in the inbox: a text scheduled with a quick pick shows in the
 * timeline as scheduled with its time, Cancel and Edit; Cancel makes it canceled, never sent.
 */
test('schedule a text for tomorrow 9:00 from the composer, see it scheduled, cancel it', async ({ page, tenant, request }) => {
  await clientTexted(request, tenant.businessId, 'Ana Lopez', 'Can you remind me tomorrow?');

  await page.goto(tenant.loginUrl);
  await page.goto('/inbox');
  await page.getByRole('option', { name: /^Ana Lopez/ }).click();
  const composer = page.getByRole('textbox', { name: 'SMS message' });
  await composer.fill('Reminder: your appointment is today at 10:30.');
  await page.getByRole('combobox', { name: 'Send later' }).selectOption({ label: 'Tomorrow 9:00' });
  await expect(page.getByTestId('send-later-summary')).toContainText('Cancel if the client replies first');
  await page.getByRole('button', { name: /^Send at / }).click();
  await expect(composer).toHaveValue('');

  const scheduled = page.locator('[data-message-type=TEXT]').filter({ hasText: 'Reminder: your appointment' });
  await expect(scheduled.getByTestId('message-status')).toContainText('Scheduled for');
  await expect(scheduled.getByTestId('message-status')).toContainText('9:00');
  await expect(scheduled.getByRole('button', { name: 'Edit' })).toBeVisible();
  await scheduled.getByRole('button', { name: 'Cancel' }).click();
  await expect(scheduled.getByTestId('message-status')).toHaveText('Canceled before it was sent');
});

test('a quick pick waits for the conversation’s time zone: Tomorrow 9:00 is 9:00 there, not UTC', async ({
  page,
  tenant,
  request,
}) => {
  await clientTexted(request, tenant.businessId, 'Ana Lopez', 'Text me tomorrow morning');
  const sql = database();
  try {
    await sql`update businesses set timezone = 'America/Chicago' where id = ${tenant.businessId}`;
    // The zone's answer comes late (a slow network): until it does, the picker cannot be used.
    await page.route(/\/api\/trpc\/[^?]*inbox\.sendLaterTimezone/, async (route) => {
      await new Promise((r) => setTimeout(r, 2_000));
      await route.continue();
    });
    await page.goto(tenant.loginUrl);
    await page.getByRole('option', { name: /^Ana Lopez/ }).click();
    await page.getByRole('textbox', { name: 'SMS message' }).fill('Good morning from the salon.');
    await page.getByRole('combobox', { name: 'Send later' }).selectOption({ label: 'Tomorrow 9:00' });
    await page.getByRole('button', { name: /^Send at / }).click();
    await expect(page.locator('[data-message-type=TEXT]').filter({ hasText: 'Good morning' })).toContainText('9:00');
    const [row] = await sql<{ send_at: Date }[]>`
      select send_at from messages where business_id = ${tenant.businessId} and content like 'Good morning%'`;
    const hour = new Intl.DateTimeFormat('en-US', { timeZone: 'America/Chicago', hour: 'numeric', hourCycle: 'h23' });
    expect(Number(hour.format(row!.send_at))).toBe(9);
  } finally {
    await sql.end();
  }
});

/**
 * Edit (reschedule) from the timeline, its time filled in: a time in the past is refused with the reason and changes
 * nothing; a new time moves the message (the timeline says so, and send_at is that time in the
 * conversation's zone), and it stays scheduled.
 */
test('reschedule a scheduled text from the timeline with Edit', async ({ page, tenant, request }) => {
  await clientTexted(request, tenant.businessId, 'Ana Lopez', 'Please text me before my visit');
  const sql = database();
  try {
    await sql`update businesses set timezone = 'America/Chicago' where id = ${tenant.businessId}`;
    await page.goto(tenant.loginUrl);
    await page.getByRole('option', { name: /^Ana Lopez/ }).click();
    await page.getByRole('textbox', { name: 'SMS message' }).fill('See you soon: bring your color swatch.');
    await page.getByRole('combobox', { name: 'Send later' }).selectOption({ label: 'Tomorrow 9:00' });
    await page.getByRole('button', { name: /^Send at / }).click();

    const scheduled = page.locator('[data-message-type=TEXT]').filter({ hasText: 'See you soon' });
    const status = scheduled.getByTestId('message-status');
    await expect(status).toContainText('9:00');
    const sendAtOf = async () => {
      const [row] = await sql<{ send_at: Date; status: string }[]>`
        select send_at, status from messages where business_id = ${tenant.businessId} and content like 'See you soon%'`;
      return row!;
    };
    const firstSendAt = (await sendAtOf()).send_at;

    await scheduled.getByRole('button', { name: 'Edit' }).click();
    const when = scheduled.getByLabel('New send time (America/Chicago)');
    // Filled in with the time it has, on the conversation's clock.
    await expect(when).toHaveValue(/T09:00$/);
    // A time already past: the server's reason, and nothing moves.
    await when.fill('2020-01-02T10:00');
    await scheduled.getByRole('button', { name: 'Save changes' }).click();
    await expect(scheduled.getByText('New send time: must be in the future')).toBeVisible();
    expect((await sendAtOf()).send_at).toEqual(firstSendAt);

    // Three days ahead at 14:30, Chicago time.
    const day = new Date(Date.now() + 3 * 86_400_000).toISOString().slice(0, 10);
    await when.fill(`${day}T14:30`);
    await scheduled.getByRole('button', { name: 'Save changes' }).click();
    await expect(status).toContainText('2:30');
    await expect(scheduled.getByRole('button', { name: 'Save changes' })).toHaveCount(0);
    const moved = await sendAtOf();
    expect(moved.status).toBe('scheduled');
    expect(moved.send_at.toISOString()).toBe(fromLocalInput('America/Chicago', `${day}T14:30`)!.toISOString());
    const dayShown = new Intl.DateTimeFormat('en-US', { timeZone: 'America/Chicago', month: 'short', day: 'numeric' });
    await expect(status).toContainText(dayShown.format(moved.send_at));
  } finally {
    await sql.end();
  }
});
