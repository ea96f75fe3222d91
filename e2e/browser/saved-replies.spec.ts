import { expect, test } from './fixtures';
import { clientTexted, database, inboundSms } from './support';

/**
 * Saved replies (docs/api.md#saved-replies): written on the settings page, inserted in the
 * composer with `/` or the picker button, resolved for the conversation's client; a reply whose
 * variable has no value for this client keeps Send disabled until staff replace it.
 */

test('write a saved reply, insert it with /, send it resolved; a missing value keeps Send disabled', async ({
  page,
  tenant,
  request,
}) => {
  const { business } = await clientTexted(request, tenant.businessId, 'Ana Lopez', 'Are you on time today?');
  // A client the business knows only by number: no first name to fill in.
  const sql = database();
  const unnamedPhone = '+1555' + String(Math.floor(Math.random() * 10_000_000)).padStart(7, '0');
  await sql`insert into clients (business_id, phone_number, client_type) values (${tenant.businessId}, ${unnamedPhone}, 'lead')`;
  await sql.end();
  await inboundSms(request, unnamedPhone, business.smsNumber, 'Hello?');

  await page.goto(tenant.loginUrl);
  await page.goto('/inbox');
  await page.getByText('Settings', { exact: true }).click();
  await page.getByRole('link', { name: 'Saved replies' }).click();
  // The list has loaded: the page is hydrated (text typed before hydration would be reset by it).
  await expect(page.getByText('None yet: write the first one.')).toBeVisible();
  await page.getByRole('textbox', { name: 'Title' }).fill('Running late');
  await page
    .getByRole('textbox', { name: 'Text' })
    .fill('Hi {{client.first_name}}, running 10 minutes late. {{ business.name }}');
  await page.getByRole('button', { name: 'Save reply' }).click();
  await expect(page.getByTestId('saved-reply').filter({ hasText: 'Running late' })).toBeVisible();
  // A typo in a variable is refused, naming it.
  await page.getByRole('textbox', { name: 'Title' }).fill('Typo');
  await page.getByRole('textbox', { name: 'Text' }).fill('Hi {{client.firstname}}');
  await page.getByRole('button', { name: 'Save reply' }).click();
  await expect(page.getByRole('alert').filter({ hasText: 'Text: unknown variable {{client.firstname}}' })).toBeVisible();

  await page.getByRole('link', { name: 'Back to the inbox' }).click();
  await page.getByRole('option', { name: /^Ana Lopez/ }).click();
  const composer = page.getByRole('textbox', { name: 'SMS message' });
  await composer.click();
  await composer.pressSequentially('/run');
  const picker = page.getByRole('listbox', { name: 'Saved replies' });
  await expect(picker.getByRole('option', { name: /Running late/ })).toHaveAttribute('aria-selected', 'true');
  await composer.press('Enter');
  const resolved = `Hi Ana, running 10 minutes late. ${tenant.businessName}`;
  await expect(composer).toHaveValue(resolved);
  await expect(picker).toBeHidden();
  await expect(page.getByTestId('sms-counter')).toContainText('1 text');
  await page.getByRole('button', { name: 'Send', exact: true }).click();
  await expect(page.locator('[data-message-type=TEXT]').filter({ hasText: resolved })).toBeVisible();
  await expect(composer).toHaveValue('');

  // Escape closes the picker and leaves the text as typed.
  await composer.pressSequentially('/late');
  await expect(picker).toBeVisible();
  await composer.press('Escape');
  await expect(picker).toBeHidden();
  await expect(composer).toHaveValue('/late');
  await composer.fill('');

  // The client without a name: the placeholder stays, visible, and Send waits for it.
  await page.getByRole('option', { name: /^Unknown/ }).click();
  const second = page.getByRole('textbox', { name: 'SMS message' });
  await page.getByRole('button', { name: 'Saved replies' }).click();
  await page.getByRole('searchbox', { name: 'Search saved replies' }).fill('late');
  await page.getByRole('searchbox', { name: 'Search saved replies' }).press('Enter');
  await expect(second).toHaveValue(`Hi {{client.first_name}}, running 10 minutes late. ${tenant.businessName}`);
  await expect(page.getByTestId('composer-unresolved')).toContainText('Replace {{client.first_name}} before sending');
  await expect(page.getByRole('button', { name: 'Send', exact: true })).toBeDisabled();
  await second.fill(`Hi there, running 10 minutes late. ${tenant.businessName}`);
  await expect(page.getByTestId('composer-unresolved')).toBeHidden();
  await expect(page.getByRole('button', { name: 'Send', exact: true })).toBeEnabled();
});
