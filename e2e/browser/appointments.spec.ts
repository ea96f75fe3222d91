import { expect, test } from './fixtures';
import { expectFitsViewport, expectNoSeriousViolations } from './page-checks';
import { addStaff, appointmentsCard as card, clientTexted, database, putAppointment } from './support';

/**
 * The client panel's Appointments card (docs/api.md#appointments) in Chromium: an appointment the
 * platform sent over REST shows with its reminders; staff confirm it (the asking reminder is
 * canceled, `appointment.confirmed` is logged with them as the actor) and cancel it (asked first).
 * A reminder in the timeline names its appointment. On a phone the card fits the screen.
 */

async function eventsOf(businessId: number, appointmentId: number) {
  const sql = database();
  const rows = await sql<{ type: string; actor_type: string; actor_staff_id: number | null }[]>`
    select type, actor_type, actor_staff_id from events
    where business_id = ${businessId} and type like 'appointment.%' and (data->>'appointment_id')::int = ${appointmentId}
    order by id`;
  await sql.end();
  return rows.map((r) => `${r.type} by ${r.actor_type}${r.actor_staff_id ? ` ${r.actor_staff_id}` : ''}`);
}

test('the card shows the appointment and its reminders; staff confirm, then cancel it', async ({ page, tenant, request }) => {
  const { client } = await clientTexted(request, tenant.businessId, 'Rosa Diaz', 'Hi, is my appointment still on?');
  const stylist = await addStaff(tenant.businessId, 'Jo Lee');
  const { appointment_id } = await putAppointment(request, tenant.businessId, { client_id: client.id, staff_id: stylist });

  await page.goto(tenant.loginUrl);
  await page.getByRole('option', { name: /^Rosa Diaz/ }).click();
  const item = card(page).getByTestId('appointment');
  await expect(item).toHaveCount(1);
  await expect(item).toContainText('Haircut with Jo Lee');
  await expect(item.getByTestId('appointment-status')).toHaveText('Booked');
  // The default rules: two days before (asking to confirm) and two hours before, both scheduled.
  const reminders = item.getByTestId('appointment-reminder');
  await expect(reminders).toHaveCount(2);
  await expect(reminders.first()).toContainText('Reminder 2 days before (asks to confirm): scheduled for');
  await expect(reminders.last()).toContainText('Reminder 2 h before: scheduled for');
  // The scheduled reminders are in the timeline, each naming its appointment.
  const timeline = page.getByRole('log', { name: 'Messages' });
  await expect(timeline.getByTestId('reminder-for').first()).toContainText('Reminder for Haircut,');

  await item.getByRole('button', { name: 'Confirm' }).click();
  await expect(item.getByTestId('appointment-status')).toHaveText('Confirmed');
  await expect(reminders.first()).toHaveAttribute('data-status', 'canceled');
  await expect(reminders.last()).toHaveAttribute('data-status', 'scheduled');
  await expect(item.getByRole('button', { name: 'Confirm' })).toHaveCount(0);
  await expect(timeline.getByTestId('reminder-for').first()).toContainText('Confirmed');
  expect(await eventsOf(tenant.businessId, appointment_id)).toEqual([
    'appointment.created by api',
    `appointment.confirmed by staff ${tenant.staffId}`,
  ]);

  // Cancel asks first; keeping it changes nothing.
  await item.getByRole('button', { name: 'Cancel' }).click();
  await item.getByRole('button', { name: 'Keep it' }).click();
  await expect(item.getByTestId('appointment-status')).toHaveText('Confirmed');
  await item.getByRole('button', { name: 'Cancel' }).click();
  await item.getByRole('button', { name: 'Yes, cancel it' }).click();
  await expect(item.getByTestId('appointment-status')).toHaveText('Canceled');
  await expect(reminders.last()).toHaveAttribute('data-status', 'canceled');
  await expect(item.getByRole('button')).toHaveCount(0);
  expect(await eventsOf(tenant.businessId, appointment_id)).toEqual([
    'appointment.created by api',
    `appointment.confirmed by staff ${tenant.staffId}`,
    `appointment.canceled by staff ${tenant.staffId}`,
  ]);
});

test('the card follows the platform live: an appointment sent while the conversation is open shows up', async ({
  page,
  tenant,
  request,
}) => {
  const { client } = await clientTexted(request, tenant.businessId, 'Lena Ko', 'Do you have anything next week?');
  await page.goto(tenant.loginUrl);
  await page.getByRole('option', { name: /^Lena Ko/ }).click();
  await expect(card(page)).toContainText('No appointments.');
  await putAppointment(request, tenant.businessId, { client_id: client.id, service: 'Colour' });
  await expect(card(page).getByTestId('appointment')).toContainText('Colour');
});

test.describe('on a phone', () => {
  test.use({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });

  test('the card fits 390 px, with a long service and location name', async ({ page, tenant, request }) => {
    const { client } = await clientTexted(request, tenant.businessId, 'Ana Lopez', 'See you soon');
    const sql = database();
    const [location] = await sql<{ id: number }[]>`insert into locations (business_id, name, timezone)
      values (${tenant.businessId}, 'Bloom Hair Studio - Hayes Valley and Lower Haight', 'America/Los_Angeles') returning id`;
    await sql.end();
    await putAppointment(request, tenant.businessId, {
      client_id: client.id,
      location_id: location!.id,
      service: 'Full head balayage with toner, blow-dry and a deep conditioning treatment',
    });
    await page.goto(tenant.loginUrl);
    await page.goto('/inbox');
    await page.getByRole('option', { name: /^Ana Lopez/ }).click();
    await page.getByRole('navigation', { name: 'Inbox sections' }).getByRole('button', { name: 'Client' }).click();
    const item = card(page).getByTestId('appointment');
    await item.scrollIntoViewIfNeeded();
    await expect(item).toContainText(/P[SD]T/);
    await item.getByRole('button', { name: 'Cancel' }).click();
    await expect(item.getByRole('button', { name: 'Yes, cancel it' })).toBeVisible();
    await expectFitsViewport(page, 'client panel with an appointment');
    await expectNoSeriousViolations(page, 'client panel with an appointment');
  });
});
