import type { Page } from '@playwright/test';
import { expect, test } from './fixtures';
import { database, equipBusiness, inboundSms } from './support';

/**
 * One search box for clients and messages (docs/api.md#client-search): the top bar finds a client
 * by name and by any part of their number however it is typed, and messages, grouped, as the user
 * types; the keyboard walks and chooses; New message finds a client by part of a number too.
 */

const box = (page: Page) => page.getByRole('combobox', { name: 'Search clients and messages' });
const suggestions = (page: Page) => page.getByRole('listbox', { name: 'Clients and messages' });
const group = (page: Page, name: 'Clients' | 'Messages') => suggestions(page).getByRole('group', { name });
const heading = (page: Page) => page.getByRole('main').getByRole('heading', { level: 2 });
const composer = (page: Page) => page.getByRole('textbox', { name: 'SMS message' });

/** A client with a number of our choosing (support's addClient draws one). */
async function addClientWithNumber(businessId: number, name: string, phone: string) {
  const sql = database();
  const [row] = await sql<{ id: number }[]>`
    insert into clients (business_id, name, phone_number, client_type) values (${businessId}, ${name}, ${phone}, 'returning') returning id`;
  await sql.end();
  return { id: row!.id, name, phone };
}

/** The same name and number in a business of its own: the search must never show it. */
async function twinElsewhere(name: string, phone: string) {
  const sql = database();
  const [business] = await sql<{ id: number }[]>`insert into businesses (name) values ('Elsewhere Salon') returning id`;
  await sql`insert into clients (business_id, name, phone_number) values (${business!.id}, ${name}, ${phone})`;
  await sql.end();
}

test('the top bar finds a client by name or by part of the number, and messages; the keyboard opens them', async ({
  page,
  tenant,
  request,
}) => {
  const business = await equipBusiness(tenant.businessId);
  const archie = await addClientWithNumber(tenant.businessId, 'Archie Olson', '+14155550175');
  await addClientWithNumber(tenant.businessId, 'Marcia Archer', '+14155550176');
  await twinElsewhere('Archie Olson', '+14155550175');
  await inboundSms(request, archie.phone, business.smsNumber, 'Can I book a trim for Saturday?');
  await page.goto(tenant.loginUrl);
  await expect(page.getByRole('listbox', { name: 'Conversations' }).getByRole('option', { name: /^Archie Olson/ })).toBeVisible();

  // By name, as the user types: grouped, this business's client only, the keyboard opens them.
  await page.keyboard.press('/');
  await expect(box(page)).toBeFocused();
  await page.keyboard.type('archie');
  await expect(group(page, 'Clients').getByRole('option')).toHaveText([/^Archie Olson/]);
  await expect(box(page)).toHaveAttribute('aria-expanded', 'true');
  await page.keyboard.press('ArrowDown');
  const first = group(page, 'Clients').getByRole('option').first();
  await expect(first).toHaveAttribute('aria-selected', 'true');
  await expect(box(page)).toHaveAttribute('aria-activedescendant', (await first.getAttribute('id'))!);
  await page.keyboard.press('Enter');
  await expect(heading(page)).toHaveText('Archie Olson');
  await expect(suggestions(page)).toHaveCount(0);
  await expect(box(page)).toHaveValue('');

  // By the last four digits, and by the number as people write it.
  for (const typed of ['0175', '(415) 555-0175']) {
    await box(page).fill(typed);
    await expect(group(page, 'Clients').getByRole('option'), typed).toHaveText([/^Archie Olson/]);
    await expect(group(page, 'Clients').getByRole('option').first().locator('mark')).toHaveText(/0175$/);
  }
  // Escape closes the list and stays in the box; a second one leaves it.
  await page.keyboard.press('Escape');
  await expect(suggestions(page)).toHaveCount(0);
  await expect(box(page)).toBeFocused();
  await page.keyboard.press('Escape');
  await expect(box(page)).not.toBeFocused();

  // Messages are a group of their own: ↓ walks past the clients into them, Enter opens the message.
  await box(page).fill('trim');
  await expect(group(page, 'Messages').getByRole('option').first()).toContainText('Can I book a trim for Saturday?');
  await expect(group(page, 'Clients')).toHaveCount(0);
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('Enter');
  await expect(heading(page)).toHaveText('Archie Olson');
  await expect(page.locator('[data-message-type=TEXT]').filter({ hasText: 'Can I book a trim' })).toHaveClass(/targeted/);

  // A client nobody has written to yet: a conversation is started and the composer awaits.
  await box(page).fill('555-0176');
  await expect(group(page, 'Clients').getByRole('option')).toHaveText([/^Marcia Archer/]);
  await expect(group(page, 'Clients').getByRole('option')).toContainText('No conversation yet');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('Enter');
  await expect(heading(page)).toHaveText('Marcia Archer');
  await expect(composer(page)).toBeFocused();

  // On a phone the list spans the screen, inside it.
  await page.setViewportSize({ width: 390, height: 844 });
  await box(page).fill('archie');
  await expect(group(page, 'Clients').getByRole('option')).toHaveText([/^Archie Olson/]);
  const list = (await suggestions(page).boundingBox())!;
  expect(list.x).toBeGreaterThanOrEqual(0);
  expect(list.x + list.width).toBeLessThanOrEqual(390);
  expect(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBeLessThanOrEqual(0);
});

test('New message finds a client by part of their number', async ({ page, tenant }) => {
  await equipBusiness(tenant.businessId);
  await addClientWithNumber(tenant.businessId, 'Nora Quinn', '+14155550142');
  await page.goto(tenant.loginUrl);
  await expect(page.getByRole('button', { name: 'New message' })).toBeVisible();

  await page.keyboard.press('n');
  const picker = page.getByRole('dialog', { name: 'New message' });
  const field = picker.getByRole('combobox', { name: 'Client name, phone number or email' });
  for (const typed of ['555-0142', '0142']) {
    await field.fill(typed);
    await expect(picker.getByRole('option'), typed).toHaveText([/^Nora Quinn/]);
  }
  await page.keyboard.press('Enter');
  await expect(heading(page)).toHaveText('Nora Quinn');
  await expect(composer(page)).toBeFocused();
});
