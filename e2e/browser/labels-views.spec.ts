import type { APIRequestContext, Page } from '@playwright/test';
import { expect, test } from './fixtures';
import { addClient, database, equipBusiness, inboundSms } from './support';

/**
 * Labels edited where they are shown (the conversation header and the client panel), the views
 * with their counts (Flagged among them), a conversation opened from Unread staying in the list
 * until a refresh or a new message, and a lead given a name from the client panel.
 */

const conversation = (page: Page, name: string) => page.getByRole('option', { name: new RegExp(`^${name}`) });
const views = (page: Page) => page.getByRole('navigation', { name: 'Views' });
const view = (page: Page, group: string, name: string) =>
  views(page)
    .getByRole('group', { name: group })
    .getByRole('button', { name: new RegExp(`^${name}`) });
const panel = (page: Page) => page.getByRole('complementary', { name: 'Client details' });
const headerLabel = (page: Page) => page.getByRole('main').getByRole('group', { name: 'Label' });
const panelLabel = (page: Page) => panel(page).getByRole('group', { name: 'Label' });

/** The REST API with the platform key, as the business's own systems would call it. */
const rest = (request: APIRequestContext, businessId: number) => async (path: string, data: unknown) => {
  const res = await request.post(`/api/v1/businesses/${businessId}${path}`, {
    headers: { 'x-api-key': process.env.PLATFORM_API_KEY! },
    data,
  });
  if (!res.ok()) throw new Error(`${path} answered ${res.status()}: ${await res.text()}`);
};

/** The conversation and the latest message of a client, by phone number. */
async function conversationOf(phone: string): Promise<{ conversationId: number; messageId: number }> {
  const sql = database();
  const [row] = await sql<{ conversation_id: number; message_id: number }[]>`
    select m.conversation_id, m.id as message_id from messages m join clients c on c.id = m.client_id
    where c.phone_number = ${phone} order by m.id desc limit 1`;
  await sql.end();
  return { conversationId: row!.conversation_id, messageId: row!.message_id };
}

test('every view has its count, Flagged spans every status, and labels are added, changed and removed in place', async ({
  page,
  tenant,
  request,
}) => {
  const business = await equipBusiness(tenant.businessId);
  const [ana, ben, carla] = await Promise.all(
    ['Ana Lopez', 'Ben Carter', 'Carla Ruiz'].map((name) => addClient(tenant.businessId, name)),
  );
  for (const [client, text] of [
    [ana!, 'Can I move my color appointment?'],
    [ben!, 'Running 5 minutes late'],
    [carla!, 'Loved the cut, thank you!'],
  ] as const)
    await inboundSms(request, client.phone, business.smsNumber, text);
  // Carla's text is flagged and her conversation resolved: the Flagged view still finds it.
  const post = rest(request, tenant.businessId);
  const carlas = await conversationOf(carla!.phone);
  await post(`/messages/${carlas.messageId}/flag`, { flagged: true });
  await post(`/conversations/${carlas.conversationId}/status`, { status: 'resolved' });

  await page.goto(tenant.loginUrl);
  await expect(conversation(page, 'Ben Carter')).toBeVisible();
  // Every view says how many conversations it holds (Unread and Flagged included).
  await expect(view(page, 'Status', 'Open')).toContainText('2');
  await expect(view(page, 'Status', 'Resolved')).toContainText('1');
  await expect(view(page, 'Assignment', 'Unread')).toContainText('3');
  await expect(view(page, 'Assignment', 'Flagged')).toContainText('1');
  const uncounted = await views(page)
    .getByRole('button')
    .evaluateAll((buttons) =>
      buttons.filter((b) => !/^\d+$/.test(b.lastElementChild?.textContent ?? '')).map((b) => b.textContent),
    );
  expect(uncounted).toEqual([]);

  await view(page, 'Assignment', 'Flagged').click();
  await expect(view(page, 'Assignment', 'Flagged')).toHaveAttribute('aria-pressed', 'true');
  await expect(view(page, 'Status', 'Open')).toHaveAttribute('aria-pressed', 'false');
  await expect(page.getByTestId('conversation-total')).toHaveText('1 conversation');
  await conversation(page, 'Carla Ruiz').click();
  await expect(page.getByTestId('conversation-status')).toHaveText('resolved');

  // Add from the header: both places show it, and the sidebar lists it with its count.
  await expect(panelLabel(page).getByRole('button', { name: 'Add label' })).toBeVisible();
  await headerLabel(page).getByRole('button', { name: 'Add label' }).click();
  await headerLabel(page).getByLabel('Label name').fill('  Color  ');
  await headerLabel(page).getByRole('button', { name: 'Save label' }).click();
  await expect(headerLabel(page).getByTestId('conversation-label')).toHaveText('Color');
  await expect(panelLabel(page).getByTestId('conversation-label')).toHaveText('Color');
  await expect(view(page, 'Label', 'Color')).toContainText('1');

  // Change from the client panel; Escape leaves the editor, not the conversation.
  await panelLabel(page).getByRole('button', { name: 'Change label Color' }).click();
  await panelLabel(page).getByLabel('Label name').press('Escape');
  await expect(panelLabel(page).getByTestId('conversation-label')).toHaveText('Color');
  await panelLabel(page).getByRole('button', { name: 'Change label Color' }).click();
  await panelLabel(page).getByLabel('Label name').fill('Cut & color');
  await panelLabel(page).getByLabel('Label name').press('Enter');
  await expect(headerLabel(page).getByTestId('conversation-label')).toHaveText('Cut & color');
  await expect(view(page, 'Label', 'Cut & color')).toContainText('1');
  await expect(
    views(page)
      .getByRole('group', { name: 'Label' })
      .getByRole('button', { name: /^Color/ }),
  ).toHaveCount(0);

  // Remove from the header: gone everywhere, the sidebar's Labels group too.
  await headerLabel(page).getByRole('button', { name: 'Remove label Cut & color' }).click();
  await expect(panelLabel(page).getByRole('button', { name: 'Add label' })).toBeVisible();
  await expect(headerLabel(page).getByRole('button', { name: 'Add label' })).toBeVisible();
  await expect(views(page).getByRole('group', { name: 'Label' })).toHaveCount(0);

  // Flagging a message in an open conversation counts at once.
  await view(page, 'Status', 'Open').click();
  await expect(view(page, 'Assignment', 'Flagged')).toHaveAttribute('aria-pressed', 'false');
  await conversation(page, 'Ana Lopez').click();
  await page.getByRole('log', { name: 'Messages' }).getByRole('button', { name: 'Flag message' }).first().click();
  await expect(view(page, 'Assignment', 'Flagged')).toContainText('2');
});

test('a conversation opened from Unread stays until a refresh or a new message; a lead is given a name', async ({
  page,
  tenant,
  request,
}) => {
  const business = await equipBusiness(tenant.businessId);
  const ana = await addClient(tenant.businessId, 'Ana Lopez');
  const ben = await addClient(tenant.businessId, 'Ben Carter');
  const leadPhone = `+1415555${String(Math.floor(Math.random() * 10_000)).padStart(4, '0')}`;
  await inboundSms(request, ana.phone, business.smsNumber, 'Is Sarah in on Saturday?');
  await inboundSms(request, ben.phone, business.smsNumber, 'Running 5 minutes late');
  await inboundSms(request, leadPhone, business.smsNumber, 'Hi, do you have a slot on Friday?');

  await page.goto(tenant.loginUrl);
  await view(page, 'Assignment', 'Unread').click();
  await expect(view(page, 'Assignment', 'Unread')).toContainText('3');
  await expect(page.getByTestId('conversation-total')).toHaveText('3 conversations');

  // Opening reads it, and it stays where it was; so does the next one.
  await conversation(page, 'Ana Lopez').click();
  await expect(view(page, 'Assignment', 'Unread')).toContainText('2');
  await expect(page.getByTestId('conversation-total')).toHaveText('2 conversations');
  await expect(conversation(page, 'Ana Lopez')).toHaveAttribute('aria-selected', 'true');
  await expect(conversation(page, 'Ana Lopez')).not.toHaveAttribute('aria-label', /unread/);
  await conversation(page, 'Ben Carter').click();
  await expect(view(page, 'Assignment', 'Unread')).toContainText('1');
  await expect(conversation(page, 'Ana Lopez')).toBeVisible();
  await expect(conversation(page, 'Ben Carter')).toHaveAttribute('aria-selected', 'true');

  // The staff member's refresh lets them go.
  await page.getByRole('button', { name: 'Refresh' }).click();
  await expect(conversation(page, 'Ana Lopez')).toHaveCount(0);
  await expect(conversation(page, 'Ben Carter')).toHaveCount(0);
  await expect(page.getByRole('button', { name: 'Refresh' })).toHaveCount(0);

  // The lead: a bare number until someone gives it a name (and an address) in the client panel.
  const lead = page.locator('[role=option]').filter({ hasText: leadPhone });
  await lead.click();
  await expect(page.getByRole('main').getByRole('heading', { level: 2 })).toHaveText(leadPhone);
  await expect(panel(page).getByRole('heading', { level: 2 })).toHaveText('Unknown client');
  await panel(page).getByRole('button', { name: 'Add name' }).click();
  const form = panel(page).getByRole('form', { name: 'Client name and email' });
  await form.getByLabel('Name').fill('Rosa Diaz');
  await form.getByLabel('Email').fill('rosa at the salon');
  await form.getByRole('button', { name: 'Save' }).click();
  await expect(form.getByRole('alert')).toContainText('Email');
  await form.getByLabel('Email').fill('Rosa.Diaz@Example.test');
  await form.getByRole('button', { name: 'Save' }).click();
  await expect(panel(page).getByRole('heading', { level: 2 })).toHaveText('Rosa Diaz');
  await expect(panel(page).getByRole('link', { name: 'rosa.diaz@example.test' })).toBeVisible();
  await expect(page.getByRole('main').getByRole('heading', { level: 2 })).toHaveText('Rosa Diaz');
  // Read, renamed, and still in the Unread list where it was.
  await expect(conversation(page, 'Rosa Diaz')).toHaveAttribute('aria-selected', 'true');
  await expect(panel(page).getByRole('button', { name: 'Edit name' })).toBeVisible();

  // A new message is a new event: the list is refreshed, the read conversation leaves, Ben is back.
  await inboundSms(request, ben.phone, business.smsNumber, 'Actually, 10 minutes');
  await expect(conversation(page, 'Ben Carter')).toHaveAttribute('aria-label', /1 unread/);
  await expect(conversation(page, 'Rosa Diaz')).toHaveCount(0);
  await expect(page.getByRole('main').getByRole('heading', { level: 2 })).toHaveText('Rosa Diaz');
});
