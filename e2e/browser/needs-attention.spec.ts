import type { APIRequestContext, Page } from '@playwright/test';
import { expect, test } from './fixtures';
import { addClient, appointmentsCard, equipBusiness, getAppointment, inboundSms, putAppointment } from './support';

/**
 * The inbox's Needs attention view (docs/api.md#needs-attention) in Chromium: clients with an
 * appointment whose asking reminder went out reply through the real signed Twilio webhook, the
 * worker reads the replies (the event log's appointment-replies handler), and the conversations
 * that need staff show under Needs attention with their reason and the sidebar's count; a "C"
 * confirms by itself and does not. Staff confirm one appointment and cancel the other from the
 * card: each leaves the view and the count drops.
 */

const needsAttention = (page: Page) =>
  page
    .getByRole('navigation', { name: 'Views' })
    .getByRole('group', { name: 'Assignment' })
    .getByRole('button', { name: /^Needs attention/ });
const conversations = (page: Page) => page.getByRole('listbox', { name: 'Conversations' }).getByRole('option');
const conversation = (page: Page, name: string) => page.getByRole('option', { name: new RegExp(`^${name}`) });

/** A client with an appointment three days ahead whose asking reminder staff sent now (it went out: the reply is read against it). */
async function askedClient(request: APIRequestContext, businessId: number, name: string) {
  const client = await addClient(businessId, name);
  const appointment = await putAppointment(request, businessId, { client_id: client.id });
  const asking = appointment.reminders.find((r) => r.asks_confirmation)!;
  const sent = await request.post(`/api/v1/businesses/${businessId}/messages/${asking.message_id}/send-now`, {
    headers: { 'x-api-key': process.env.PLATFORM_API_KEY! },
  });
  expect(sent.status()).toBe(200);
  const reminderStatus = async () =>
    (await getAppointment(request, businessId, appointment.external_id)).reminders.find((r) => r.asks_confirmation)!.status;
  await expect.poll(reminderStatus).toMatch(/^(sent|delivered)$/);
  return { ...client, appointment: appointment.external_id };
}

test('replies that need staff show under Needs attention with their reason; confirming or canceling from the card takes them out', async ({
  page,
  tenant,
  request,
}) => {
  // Three appointments, each asked, each replied to through the worker: two wait for staff.
  test.slow();
  const business = await equipBusiness(tenant.businessId);
  const rosa = await askedClient(request, tenant.businessId, 'Rosa Diaz');
  const sam = await askedClient(request, tenant.businessId, 'Sam Ortiz');
  const lena = await askedClient(request, tenant.businessId, 'Lena Ko');
  await inboundSms(request, rosa.phone, business.smsNumber, 'can we move it to thursday');
  await inboundSms(request, sam.phone, business.smsNumber, 'is it at 3?');
  await inboundSms(request, lena.phone, business.smsNumber, 'C');
  // The worker reads the replies: Lena's "C" confirms hers, and the platform's view of the same filter has the other two.
  await expect
    .poll(async () => (await getAppointment(request, tenant.businessId, lena.appointment)).status, { timeout: 30_000 })
    .toBe('confirmed');
  await expect
    .poll(
      async () => {
        const res = await request.get(`/api/v1/businesses/${tenant.businessId}/conversations?needs_attention=true`, {
          headers: { 'x-api-key': process.env.PLATFORM_API_KEY! },
        });
        return ((await res.json()) as { total_conversations: number }).total_conversations;
      },
      { timeout: 30_000 },
    )
    .toBe(2);

  await page.goto(tenant.loginUrl);
  await expect(needsAttention(page)).toHaveText(/^Needs attention\s*2$/);
  await needsAttention(page).click();
  await expect(needsAttention(page)).toHaveAttribute('aria-pressed', 'true');
  await expect(conversations(page)).toHaveCount(2);
  await expect(conversation(page, 'Lena Ko')).toHaveCount(0);
  await expect(conversation(page, 'Rosa Diaz').getByTestId('needs-attention-reason')).toHaveText('Reschedule requested');
  await expect(conversation(page, 'Rosa Diaz')).toHaveAccessibleName(/needs attention: Reschedule requested$/);
  await expect(conversation(page, 'Sam Ortiz').getByTestId('needs-attention-reason')).toHaveText('Reply unclear');

  // Rosa's: the reply read in the timeline, then staff confirm from the card.
  await conversation(page, 'Rosa Diaz').click();
  await expect(page.getByRole('log', { name: 'Messages' }).getByTestId('appointment-reply')).toHaveText(
    'Reschedule requested by reply',
  );
  const rosaCard = appointmentsCard(page).getByTestId('appointment');
  await rosaCard.getByRole('button', { name: 'Confirm' }).click();
  await expect(rosaCard.getByTestId('appointment-status')).toHaveText('Confirmed');
  await expect(needsAttention(page)).toHaveText(/^Needs attention\s*1$/);
  await expect(conversation(page, 'Rosa Diaz')).toHaveCount(0);
  await expect(conversations(page)).toHaveCount(1);

  // Sam's: staff cancel it (asked first).
  await conversation(page, 'Sam Ortiz').click();
  const samCard = appointmentsCard(page).getByTestId('appointment');
  await samCard.getByRole('button', { name: 'Cancel' }).click();
  await samCard.getByRole('button', { name: 'Yes, cancel it' }).click();
  await expect(samCard.getByTestId('appointment-status')).toHaveText('Canceled');
  await expect(needsAttention(page)).toHaveText(/^Needs attention\s*0$/);
  await expect(conversations(page)).toHaveCount(0);
  await expect(page.getByText('No conversations here.')).toBeVisible();
});
