import { expect, test } from './fixtures';
import { addStaff, clientTexted, database, staffLoginUrl } from './support';

/**
 * @mentions in notes (docs/api.md#mentions): A types `@` in a note; the list offers the business's
 * active staff narrowed by the letters typed (not a colleague who left), ↑/↓ move, Escape closes,
 * Enter chooses; a chosen name deleted from the text is no mention. A adds the note and resolves the
 * conversation; B's Mentions view (every status) counts and lists it; once B opened it, it leaves
 * the view (on the list's next refresh, as a read conversation leaves Unread).
 */
test('A mentions B in a note; B finds it under Mentions until B opens it', async ({ page, browser, tenant, request }) => {
  test.slow();
  const { client } = await clientTexted(request, tenant.businessId, 'Rosa Díaz', 'Is my colour appointment still on?');
  const colleague = await addStaff(tenant.businessId, 'Sam Stylist');
  await addStaff(tenant.businessId, 'Samuel Reyes');
  const sql = database();
  await sql`insert into staff (business_id, name, role, active) values (${tenant.businessId}, 'Sam Former', 'staff', false)`;
  const conversationOption = (p: typeof page) => p.getByRole('option', { name: new RegExp(`^${client.name}`) });

  // A writes the note.
  await page.goto(tenant.loginUrl);
  await page.goto('/inbox');
  await conversationOption(page).click();
  await page.getByRole('tab', { name: 'Note' }).click();
  const box = page.getByRole('textbox', { name: 'Internal note' });
  await box.pressSequentially('Can you confirm the colour? @Sa');
  const list = page.getByRole('listbox', { name: 'Mention a colleague' });
  const options = list.getByRole('option');
  // Active staff only, by name; the first is active.
  await expect(options).toHaveText(['Sam Stylist', 'Samuel Reyes']);
  const activeIs = async (i: number) =>
    expect(box).toHaveAttribute('aria-activedescendant', (await options.nth(i).getAttribute('id'))!);
  await activeIs(0);
  await box.press('ArrowDown');
  await activeIs(1);
  await expect(options.nth(1)).toHaveAttribute('aria-selected', 'true');
  await box.press('ArrowUp');
  await activeIs(0);
  await box.press('Escape');
  await expect(list).toBeHidden();
  await expect(box).toHaveValue('Can you confirm the colour? @Sa');
  // Typing on opens it again, narrowed.
  await box.pressSequentially('m ');
  await expect(list).toBeHidden();
  await box.press('Backspace');
  await expect(options).toHaveText(['Sam Stylist', 'Samuel Reyes']);
  await box.press('Enter');
  await expect(list).toBeHidden();
  await expect(box).toHaveValue('Can you confirm the colour? @Sam Stylist ');
  // Samuel chosen, then his name taken out again: no mention of him.
  await box.pressSequentially('or @Samu');
  await expect(options).toHaveText(['Samuel Reyes']);
  await box.press('Enter');
  await expect(box).toHaveValue('Can you confirm the colour? @Sam Stylist or @Samuel Reyes ');
  for (let i = 0; i < '@Samuel Reyes '.length; i++) await box.press('Backspace');
  await box.pressSequentially('thanks!');
  await expect(box).toHaveValue('Can you confirm the colour? @Sam Stylist or thanks!');
  await page.getByRole('button', { name: 'Add note' }).click();
  await expect(page.locator('[data-message-type=NOTE]')).toContainText('@Sam Stylist or thanks!');

  try {
    // The timeline shows the note before the server has stored it (optimistic): wait for the row.
    await expect
      .poll(async () =>
        (await sql`select staff_id, seen_at from note_mentions where business_id = ${tenant.businessId}`).map((r) => [
          r.staff_id,
          r.seen_at,
        ]),
      )
      .toEqual([[colleague, null]]);
  } finally {
    await sql.end();
  }

  // Resolved: the Mentions view spans every status.
  await page.getByRole('button', { name: 'Resolve', exact: true }).click();
  await expect(page.getByRole('button', { name: /^Resolved/ })).toHaveText('Resolved1');

  // B signs in: Mentions counts the conversation and lists it.
  const context = await browser.newContext();
  const b = await context.newPage();
  await b.goto(await staffLoginUrl(request, tenant.businessId, colleague));
  await b.goto('/inbox');
  const mentions = b.getByRole('button', { name: /^Mentions/ });
  await expect(mentions).toHaveText('Mentions1');
  await mentions.click();
  await expect(mentions).toHaveAttribute('aria-pressed', 'true');
  await expect(b.getByRole('listbox', { name: /conversations/i }).getByRole('option')).toHaveCount(1);
  await conversationOption(b).click();
  await expect(b.locator('[data-message-type=NOTE]')).toContainText('@Sam Stylist or thanks!');

  // Opened: the count drops at once; the row leaves the view when the list is next read.
  await expect(mentions).toHaveText('Mentions0');
  await b.getByRole('button', { name: 'Refresh' }).click();
  await expect(conversationOption(b)).toHaveCount(0);
  await context.close();
});
