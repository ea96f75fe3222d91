import type { Page } from '@playwright/test';
import { expect, test } from './fixtures';
import { addStaff, clientTexted, database } from './support';

/**
 * The timeline says who did what (docs/architecture.md#event-log): assigning, snoozing, resolving,
 * labeling, recording consent and opting out leave compact activity lines naming who did it,
 * written by the worker's handler of the event log and shown without a reload. Opting out asks for
 * confirmation and a reason, which the line shows, and the consent block then says the client is
 * opted out instead of a green "Given".
 */

const timeline = (page: Page) => page.getByRole('log', { name: 'Messages' });
const lines = (page: Page) => timeline(page).getByTestId('activity-line');
const panel = (page: Page) => page.getByRole('complementary', { name: 'Client details' });

test('assign, snooze, resolve, label, consent and opt-out appear in the timeline with who did them', async ({
  page,
  tenant,
  request,
}) => {
  const { client } = await clientTexted(request, tenant.businessId, 'Archie Olson', 'Can I book a trim on Friday?');
  await addStaff(tenant.businessId, 'Ben Carter');
  const me = tenant.staffName;

  await page.goto(tenant.loginUrl);
  await page.getByRole('option', { name: /^Archie Olson/ }).click();
  await expect(timeline(page)).toContainText('Can I book a trim on Friday?');
  await expect(lines(page)).toHaveCount(0);

  await page.getByLabel('Assignee').selectOption({ label: 'Ben Carter' });
  await expect(lines(page).last()).toContainText(`${me} assigned the conversation to Ben Carter`);

  await page.getByLabel('Pending or snooze').selectOption('1h');
  await expect(lines(page).last()).toContainText(`${me} snoozed the conversation until`);

  await page.getByRole('button', { name: 'Resolve', exact: true }).click();
  await expect(lines(page).last()).toContainText(`${me} resolved the conversation`);

  // A change made elsewhere (the business's system, through the API) shows live, as the API's.
  const conversationId = await conversationOf(client.id);
  const labeled = await request.post(`/api/v1/businesses/${tenant.businessId}/conversations/${conversationId}/label`, {
    headers: { 'x-api-key': process.env.PLATFORM_API_KEY! },
    data: { label: 'VIP' },
  });
  expect(labeled.ok()).toBe(true);
  await expect(lines(page).last()).toContainText('The API labeled it “VIP”');

  // Consent given in person, then the client asks at the desk to stop texts.
  await panel(page).getByRole('button', { name: 'Record consent' }).click();
  await panel(page).getByRole('form', { name: 'Record consent' }).getByRole('button', { name: 'Save' }).click();
  await expect(panel(page).getByTestId('consent-sms-marketing')).toContainText('Given · In person');
  await expect(lines(page).last()).toContainText(`${me} recorded marketing consent for texts: given in person`);

  // Opting out asks first, with a reason; Cancel changes nothing.
  await panel(page).getByRole('button', { name: 'Opt out of texts' }).click();
  const confirm = panel(page).getByRole('form', { name: 'Opt out of texts' });
  await expect(confirm).toContainText('No more texts will go to this client');
  await expect(confirm.getByRole('button', { name: 'Confirm opt-out' })).toBeDisabled();
  await confirm.getByRole('button', { name: 'Cancel' }).click();
  await expect(panel(page).getByTestId('sms-consent')).toHaveText('Subscribed');
  await panel(page).getByRole('button', { name: 'Opt out of texts' }).click();
  await confirm.getByLabel('Reason').fill('Asked at the front desk to stop reminders');
  await confirm.getByRole('button', { name: 'Confirm opt-out' }).click();
  await expect(panel(page).getByTestId('sms-consent')).toHaveText('Opted out');
  await expect(lines(page).last()).toContainText(
    `${me} opted the client out of texts: Asked at the front desk to stop reminders`,
  );
  // The consent block follows: opted out, the consent on file set aside, no green "Given".
  const marketing = panel(page).getByTestId('consent-sms-marketing');
  await expect(marketing).toContainText(/^Opted out · given .*, not used while opted out$/);
  await expect(marketing).not.toContainText('Given');
  await expect(panel(page).getByTestId('consent-sms-transactional')).toHaveText('Opted out');
  await expect(panel(page).getByTestId('consent-email-marketing')).toHaveText('Not on record');

  // Every line, in the order things happened.
  const expected = [
    `${me} assigned the conversation to Ben Carter`,
    `${me} snoozed the conversation until`,
    `${me} resolved the conversation`,
    'The API labeled it “VIP”',
    `${me} recorded marketing consent for texts: given in person`,
    `${me} opted the client out of texts`,
  ];
  await expect(lines(page)).toHaveCount(expected.length);
  const texts = await lines(page).allTextContents();
  expected.forEach((start, i) => expect(texts[i]).toContain(start));
});

/** The client's conversation (one per client). */
async function conversationOf(clientId: number): Promise<number> {
  const sql = database();
  const [row] = await sql<{ id: number }[]>`select id from conversations where client_id = ${clientId}`;
  await sql.end();
  return row!.id;
}
