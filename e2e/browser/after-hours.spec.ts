import { expect, test } from './fixtures';
import { addClient, database, equipBusiness } from './support';

/**
 * The after-hours answer (docs/api.md#after-hours-answer): hours that make the business closed
 * now, the answer turned on in the inbox with its preview, then a text from the sandbox phone
 * after hours gets the answer naming the next opening, in the phone and in the inbox's timeline;
 * a second text in the same closed period gets none. Test businesses are in UTC.
 */
test('set hours, turn the answer on, text from the sandbox after hours and see the answer', async ({ page, tenant, request }) => {
  test.slow(); // four pages, and the worker's answer to wait for
  await equipBusiness(tenant.businessId);
  const client = await addClient(tenant.businessId, 'Rosa Díaz');

  // Open one hour a day, from two hours from now: closed now, with an opening ahead.
  const clock = (m: number) => `${String(Math.floor(m / 60) % 24).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`;
  const now = new Date();
  const start = (now.getUTCHours() * 60 + now.getUTCMinutes() + 120) % 1440;
  const day = [{ start: clock(start), end: clock(start + 60) }];
  const days = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'];
  const hours = await request.put(`/api/v1/businesses/${tenant.businessId}/opening-hours`, {
    headers: { 'x-api-key': process.env.PLATFORM_API_KEY! },
    data: { weekly: Object.fromEntries(days.map((d) => [d, day])), exceptions: [] },
  });
  expect(hours.status(), await hours.text()).toBe(200);
  const opening = new Date(((await hours.json()) as { status: { next_opening: string } }).status.next_opening);
  const weekday = opening.toLocaleDateString('en-US', { weekday: 'long', timeZone: 'UTC' });
  const time = opening.toLocaleTimeString('en-US', { hour: 'numeric', minute: '2-digit', timeZone: 'UTC' });

  await page.goto(tenant.loginUrl);
  await page.goto('/settings/opening-hours');
  await expect(page.getByTestId('opening-status')).toContainText('Closed now');

  await page.goto('/settings/after-hours');
  const form = page.getByRole('form', { name: 'Business after-hours answer' });
  const preview = form.getByTestId('after-hours-preview');
  await expect(preview).toHaveText('Off: no answer is sent.');
  const answerBox = form.getByRole('textbox', { name: 'Answer', exact: true });
  await answerBox.fill('{business_name}: we are closed. We open {next_opening} and will answer then.');
  const expected = `${tenant.businessName}: we are closed. We open ${weekday} ${time} and will answer then.`;
  await expect(preview).toHaveText(expected);
  await answerBox.fill('Hi {first_name}');
  await expect(form.getByRole('alert')).toHaveText('{first_name} is not a variable.');
  await answerBox.fill('{business_name}: we are closed. We open {next_opening} and will answer then.');
  await form.getByRole('button', { name: 'Save the answer' }).click();
  await expect(form.getByRole('status')).toHaveText('Saved.');

  await page.goto('/sandbox');
  await page.getByRole('searchbox', { name: 'Search clients' }).fill(client.name);
  await page.getByRole('button', { name: new RegExp(client.name) }).click();
  const box = page.getByRole('textbox', { name: 'Reply as client' });
  await box.fill('Are you open tonight?');
  await page.getByRole('button', { name: 'Send SMS reply' }).click();
  const thread = page.getByRole('list', { name: 'SMS thread' });
  const answer = thread.locator('[data-direction="outbound"]');
  // The worker's handler answers; the phone shows it when it arrives.
  await expect(answer.getByText(expected)).toBeVisible({ timeout: 20_000 });

  // A second text in the same closed period: no second answer.
  await box.fill('Also, do you do colour?');
  await page.getByRole('button', { name: 'Send SMS reply' }).click();
  await expect(thread.locator('[data-direction="inbound"]').getByText('Also, do you do colour?')).toBeVisible();
  const sql = database();
  try {
    // The handler has seen the second text once it is past its event; then still one answer.
    await expect
      .poll(
        async () =>
          (
            await sql<{ behind: boolean }[]>`
              select exists (select 1 from events e join messages m on m.id = e.message_id
                             join event_handler_cursors c on c.handler = 'after-hours-answer'
                             where m.business_id = ${tenant.businessId} and m.content = 'Also, do you do colour?'
                               and e.type = 'message.received' and (e.tx_id, e.id) > (c.tx_id, c.event_id)) as behind`
          )[0]!.behind,
        { timeout: 20_000 },
      )
      .toBe(false);
    const answers = await sql`select id from messages where business_id = ${tenant.businessId}
                              and provider_metadata->>'auto_reply' = 'after_hours'`;
    expect(answers).toHaveLength(1);
  } finally {
    await sql.end();
  }
  await expect(answer).toHaveCount(1);

  // In the inbox, the answer is in the conversation's timeline.
  await page.goto('/inbox');
  await page.getByRole('option', { name: new RegExp(`^${client.name}`) }).click();
  await expect(page.getByRole('log', { name: 'Messages' }).getByText(expected)).toBeVisible();
});
