import type { Page } from '@playwright/test';
import { expect, test } from './fixtures';
import { addClient, equipBusiness } from './support';

/**
 * "New message" (docs/api.md#new-conversation) in Chromium: start a conversation with a client of
 * the directory, or with a number typed by hand, and land in it with the composer focused.
 */

const heading = (page: Page) => page.getByRole('main').getByRole('heading', { level: 2 });
const picker = (page: Page) => page.getByRole('dialog', { name: 'New message' });

test('n opens the picker; a client found by name, then a new number typed by hand, each land in their conversation', async ({
  page,
  tenant,
}) => {
  await equipBusiness(tenant.businessId);
  await addClient(tenant.businessId, 'Nora Quinn');
  await page.goto(tenant.loginUrl);
  await expect(page.getByRole('button', { name: 'New message' })).toBeVisible();

  // The keyboard way: n, type part of the name, Enter.
  await page.keyboard.press('n');
  await expect(picker(page)).toBeVisible();
  await page.getByRole('combobox', { name: 'Client name, phone number or email' }).fill('nora q');
  await expect(picker(page).getByRole('option', { name: /Nora Quinn/ })).toBeVisible();
  await page.keyboard.press('Enter');
  await expect(picker(page)).toHaveCount(0);
  await expect(heading(page)).toHaveText('Nora Quinn');
  await expect(page.getByRole('textbox', { name: 'SMS message' })).toBeFocused();

  // A number nobody has, typed as a person would: offered read in the business's country, becomes a lead.
  const digits = `917${200 + Math.floor(Math.random() * 700)}${String(Math.floor(Math.random() * 10_000)).padStart(4, '0')}`;
  const typed = `(${digits.slice(0, 3)}) ${digits.slice(3, 6)}-${digits.slice(6)}`;
  await page.getByRole('button', { name: 'New message' }).click();
  await page.getByRole('combobox', { name: 'Client name, phone number or email' }).fill(typed);
  await picker(page)
    .getByRole('option', { name: `Text +1${digits}` })
    .click();
  await expect(heading(page)).toHaveText(`+1${digits}`);
  const composer = page.getByRole('textbox', { name: 'SMS message' });
  await expect(composer).toBeFocused();
  await composer.fill('Hi! This is the front desk at the studio.');
  await page.keyboard.press('Control+Enter');
  await expect(page.getByRole('log', { name: 'Messages' }).getByText('Hi! This is the front desk at the studio.')).toBeVisible();

  // Escape closes the picker without going anywhere.
  await page.keyboard.press('Escape'); // leave the composer
  await page.keyboard.press('n');
  await page.keyboard.press('Escape');
  await expect(picker(page)).toHaveCount(0);
  await expect(heading(page)).toHaveText(`+1${digits}`);
});
