import type { Page } from '@playwright/test';
import { expect, test } from './fixtures';
import { addClient, clientTexted, equipBusiness, inboundSms } from './support';

/**
 * Possible opt-outs in the inbox (docs/api.md#possible-opt-outs): a text that reads like "stop"
 * arrives through the signed webhook, the conversation shows a banner quoting it, and staff decide
 * in one click; the banner comes and goes by live events, without a reload.
 */

const conversation = (page: Page, name: string) => page.getByRole('option', { name: new RegExp(`^${name}`) });
const banner = (page: Page) => page.getByRole('region', { name: 'Possible opt-out' });
const clientPanel = (page: Page) => page.getByRole('complementary', { name: 'Client details' });
const sidebarFilter = (page: Page) =>
  page.getByRole('navigation', { name: 'Views' }).getByRole('button', { name: /Possible opt-out/ });

test('a likely opt-out shows a banner; "Opt out of texts" opts the client out and blocks SMS', async ({
  page,
  tenant,
  request,
}) => {
  const business = await equipBusiness(tenant.businessId);
  const rosa = await addClient(tenant.businessId, 'Rosa Diaz');
  await addClient(tenant.businessId, 'Ben Carter');
  await inboundSms(request, rosa.phone, business.smsNumber, 'Please stop texting me, thanks');

  await page.goto(tenant.loginUrl);
  await expect(sidebarFilter(page)).toContainText('1');
  await sidebarFilter(page).click();
  await expect(sidebarFilter(page)).toHaveAttribute('aria-pressed', 'true');
  await conversation(page, 'Rosa Diaz').click();
  await expect(banner(page)).toBeVisible();
  await expect(banner(page)).toContainText('Please stop texting me, thanks');
  await expect(banner(page)).toContainText('US rules require honouring it within 10 business days');
  await expect(clientPanel(page).getByTestId('sms-consent')).toHaveText('Subscribed');

  await banner(page).getByRole('button', { name: 'Opt out of texts' }).click();
  await expect(banner(page)).toHaveCount(0);
  await expect(clientPanel(page).getByTestId('sms-consent')).toHaveText('Opted out');
  await expect(page.getByTestId('composer-blocked')).toContainText('opted out of text messages');
  await expect(page.getByRole('textbox', { name: 'SMS message' })).toBeDisabled();
  await expect(page.getByRole('log', { name: 'Messages' })).toContainText(
    `Marked opted out of texts by ${tenant.staffName} after: "Please stop texting me, thanks"`,
  );
  await expect(sidebarFilter(page)).toContainText('0');

  // Opting back in asks how the client asked, and their words: only the client can ask for texts again.
  await clientPanel(page).getByRole('button', { name: 'Opt back in to texts' }).click();
  const optIn = clientPanel(page).getByRole('form', { name: 'Opt back in to texts' });
  await optIn.getByLabel('How they asked').selectOption('phone_call');
  await optIn.getByLabel('Their words or the circumstances').fill('Called to get reminders again');
  await optIn.getByRole('button', { name: 'Confirm opt-in' }).click();
  await expect(clientPanel(page).getByTestId('sms-consent')).toHaveText('Subscribed');
  // The history keeps both: the confirmed opt-out and the opt-in with its note.
  await clientPanel(page)
    .getByText(/Opt-out history \(2\)/)
    .click();
  await expect(
    clientPanel(page).getByText(/texts opted back in \(Phone call, by .*\) — “Called to get reminders again”/),
  ).toBeVisible();
  await expect(page.getByTestId('composer-blocked')).toHaveCount(0);
});

test('the banner appears live on the open conversation; "Keep subscribed" dismisses it', async ({ page, tenant, request }) => {
  const { business, client: ana } = await clientTexted(request, tenant.businessId, 'Ana Lopez', 'Can I come at 4 instead?');

  await page.goto(tenant.loginUrl);
  await conversation(page, 'Ana Lopez').click();
  await expect(page.getByRole('log', { name: 'Messages' })).toContainText('Can I come at 4 instead?');
  await expect(banner(page)).toHaveCount(0);

  await inboundSms(request, ana.phone, business.smsNumber, 'no más mensajes por favor');
  await expect(banner(page)).toContainText('no más mensajes por favor');
  await banner(page).getByRole('button', { name: 'Keep subscribed' }).click();
  await expect(banner(page)).toHaveCount(0);
  await expect(clientPanel(page).getByTestId('sms-consent')).toHaveText('Subscribed');
  await expect(page.getByRole('log', { name: 'Messages' })).toContainText(`Kept subscribed by ${tenant.staffName}`);
  await expect(page.getByRole('textbox', { name: 'SMS message' })).toBeEnabled();
});
