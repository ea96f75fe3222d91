import { expect, test } from './fixtures';
import { addStaff, clientTexted, database, staffLoginUrl } from './support';

/**
 * @mentions in notes (docs/api.md#mentions): A types `@` in a note, picks B from the list by
 * keyboard and adds the note; B's Mentions view counts and lists the conversation; once B opened
 * it, it leaves the view (on the list's next refresh, as a read conversation leaves Unread).
 */
test('A mentions B in a note; B finds it under Mentions until B opens it', async ({ page, browser, tenant, request }) => {
  test.setTimeout(60_000);
  const { client } = await clientTexted(request, tenant.businessId, 'Rosa Díaz', 'Is my colour appointment still on?');
  const colleague = await addStaff(tenant.businessId, 'Sam Stylist');
  const conversationOption = (p: typeof page) => p.getByRole('option', { name: new RegExp(`^${client.name}`) });

  // A writes the note.
  await page.goto(tenant.loginUrl);
  await page.goto('/inbox');
  await conversationOption(page).click();
  await page.getByRole('tab', { name: 'Note' }).click();
  const box = page.getByRole('textbox', { name: 'Internal note' });
  await box.pressSequentially('Can you confirm the colour? @Sa');
  const list = page.getByRole('listbox', { name: 'Mention a colleague' });
  await expect(list.getByRole('option')).toHaveText(['Sam Stylist']);
  await expect(box).toHaveAttribute('aria-activedescendant', (await list.getByRole('option').getAttribute('id'))!);
  await box.press('Enter');
  await expect(list).toBeHidden();
  await expect(box).toHaveValue('Can you confirm the colour? @Sam Stylist ');
  await box.pressSequentially('thanks!');
  await page.getByRole('button', { name: 'Add note' }).click();
  await expect(page.locator('[data-message-type=NOTE]')).toContainText('@Sam Stylist thanks!');

  const sql = database();
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
  await expect(b.locator('[data-message-type=NOTE]')).toContainText('@Sam Stylist thanks!');

  // Opened: the count drops at once; the row leaves the view when the list is next read.
  await expect(mentions).toHaveText('Mentions0');
  await b.getByRole('button', { name: 'Refresh' }).click();
  await expect(conversationOption(b)).toHaveCount(0);
  await context.close();
});
