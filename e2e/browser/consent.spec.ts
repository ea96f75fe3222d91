import type { Page } from '@playwright/test';
import { expect, test } from './fixtures';
import { clientTexted } from './support';

/**
 * The client panel's consent section (docs/api.md#consent) in Chromium: staff record what the
 * client said, the panel and its history show it, and a campaign text follows the current record.
 */

const panel = (page: Page) =>
  page.getByRole('complementary', { name: 'Client details' }).getByRole('region', { name: 'Consent' });
const timeline = (page: Page) => page.getByRole('log', { name: 'Messages' });

async function recordConsent(page: Page, status: 'Given' | 'Withdrawn', how: string, note: string) {
  await panel(page).getByRole('button', { name: 'Record consent' }).click();
  const form = page.getByRole('form', { name: 'Record consent' });
  await form.getByLabel('Channel').selectOption({ label: 'Texts' });
  await form.getByLabel('Purpose').selectOption({ label: 'Marketing' });
  await form.getByLabel('Consent').selectOption({ label: status });
  await form.getByLabel('How').selectOption({ label: how });
  await form.getByLabel('Wording or note').fill(note);
  await form.getByRole('button', { name: 'Save' }).click();
  await expect(form).toHaveCount(0);
}

test('staff record marketing consent in the client panel, and a campaign text follows it', async ({ page, tenant, request }) => {
  const { client: zoe } = await clientTexted(request, tenant.businessId, 'Zoe Park', 'Do you have anything on Friday?');
  const campaign = async (text: string) => {
    const res = await request.post(`/api/v1/businesses/${tenant.businessId}/sms`, {
      headers: { 'x-api-key': process.env.PLATFORM_API_KEY! },
      data: { sender_type: 'system', category: 'campaign', messages: [{ client_id: zoe.id, message: text }] },
    });
    expect(res.status()).toBe(200);
  };

  await page.goto(tenant.loginUrl);
  await page.getByRole('option', { name: /^Zoe Park/ }).click();
  await expect(panel(page).getByTestId('consent-sms-marketing')).toHaveText('Not on record');

  // Without consent a campaign text is refused, and the timeline says why.
  await campaign('Spring offer: 20% off colour');
  await expect(timeline(page).getByText('Spring offer: 20% off colour')).toBeVisible();
  await expect(timeline(page).getByText(/has not given marketing consent for texts/)).toBeVisible();

  await recordConsent(page, 'Given', 'In person', 'Said yes to offers at checkout');
  await expect(panel(page).getByTestId('consent-sms-marketing')).toContainText('Given · In person');
  await expect(panel(page).getByTestId('consent-sms-transactional')).toHaveText('Not on record');

  // With consent the next campaign text goes out (the sandbox plays it to delivered).
  await campaign('Summer offer: free blow-dry');
  await expect(timeline(page).getByText('Summer offer: free blow-dry')).toBeVisible();
  await expect(timeline(page).getByText(/has not given marketing consent for texts/)).toHaveCount(1);

  // The client changes their mind on the phone: the withdrawal is current, the history keeps both.
  await recordConsent(page, 'Withdrawn', 'Phone call', 'Asked to stop offers');
  await expect(panel(page).getByTestId('consent-sms-marketing')).toContainText('Withdrawn · Phone call');
  await panel(page).getByText('History (2)').click();
  await expect(panel(page).getByRole('listitem')).toHaveCount(2);
  await expect(panel(page).getByRole('listitem').first()).toContainText('Asked to stop offers');
  await expect(panel(page).getByRole('listitem').last()).toContainText('Said yes to offers at checkout');
});
