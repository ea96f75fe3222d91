import type { Page } from '@playwright/test';
import { expect, test } from './fixtures';
import { addStaff, clientTexted, database, staffLoginUrl } from './support';

/**
 * The collision guard (docs/api.md#collision-guard): two staff of one business, each in their own
 * browser, answer the same client's text at the same moment. The server lets one reply go and
 * holds the other (its composer shows the notice, the text still in it); Send anyway sends it.
 */
test('A and B reply at once: the second gets the collision notice, then sends anyway', async ({
  page,
  browser,
  tenant,
  request,
}) => {
  test.slow();
  const { client } = await clientTexted(request, tenant.businessId, 'Rosa Díaz', 'Can I move my 3pm to 4?');
  const colleague = await addStaff(tenant.businessId, 'Sam Stylist');

  const colleagueContext = await browser.newContext();
  const b = await colleagueContext.newPage();
  const open = async (p: Page, loginUrl: string) => {
    await p.goto(loginUrl);
    await p.goto('/inbox');
    await p.getByRole('option', { name: new RegExp(`^${client.name}`) }).click();
    await expect(p.getByRole('log', { name: 'Messages' })).toContainText('Can I move my 3pm to 4?');
  };
  await open(page, tenant.loginUrl);
  await open(b, await staffLoginUrl(request, tenant.businessId, colleague));

  const replies = new Map([
    [page, 'Yes, 4pm works!'],
    [b, 'Sure, see you at 4.'],
  ]);
  for (const [p, text] of replies) await p.getByRole('textbox', { name: 'SMS message' }).fill(text);
  // At the same moment: each send carries the client's text as the newest it has seen.
  await Promise.all([...replies.keys()].map((p) => p.getByRole('button', { name: 'Send', exact: true }).click()));

  // One of the two is held: its notice names the other's reply, its text is still in its composer.
  const notices = [...replies.keys()].map((p) => p.getByTestId('collision-notice'));
  await expect.poll(async () => (await Promise.all(notices.map((n) => n.isVisible()))).filter(Boolean).length).toBe(1);
  const held = (await notices[0]!.isVisible()) ? page : b;
  const notice = held.getByTestId('collision-notice');
  await expect(notice).toHaveAttribute('role', 'alert');
  await expect(notice).toContainText('1 reply by someone else');
  await expect(held.getByRole('textbox', { name: 'SMS message' })).toHaveValue(replies.get(held)!);
  // The reply that went is in the held sender's timeline: they can read it before deciding.
  const other = held === page ? b : page;
  await expect(held.getByRole('log', { name: 'Messages' })).toContainText(replies.get(other)!);

  await notice.getByRole('button', { name: 'Send anyway' }).click();
  await expect(notice).toBeHidden();
  await expect(held.getByRole('textbox', { name: 'SMS message' })).toHaveValue('');
  for (const p of replies.keys())
    for (const text of replies.values()) await expect(p.getByRole('log', { name: 'Messages' })).toContainText(text);

  const sql = database();
  try {
    const sent = await sql`select content from messages where client_id = ${client.id} and direction = 'outbound'`;
    expect(sent.map((m) => m.content).sort()).toEqual([...replies.values()].sort());
  } finally {
    await sql.end();
  }
  await colleagueContext.close();
});

/**
 * Keep editing: the notice goes and the text stays; the new message is already in the timeline (the
 * held send read it again), so the next send carries it as seen and goes. The page gets no live
 * events here (its stream is refused), so only the 409 can have brought the colleague's reply in.
 */
test('Keep editing keeps the text; the next send, having seen the new reply, goes', async ({ page, tenant, request }) => {
  const { client } = await clientTexted(request, tenant.businessId, 'Ana Lopez', 'Is Friday free?');
  const colleague = await addStaff(tenant.businessId, 'Sam Stylist');
  await page.route('**/api/trpc/inbox.events**', (route) => route.abort());
  await page.goto(tenant.loginUrl);
  await page.goto('/inbox');
  await page.getByRole('option', { name: new RegExp(`^${client.name}`) }).click();
  const timeline = page.getByRole('log', { name: 'Messages' });
  await expect(timeline).toContainText('Is Friday free?');

  // The colleague answers through the API while this page shows only the client's text.
  const answered = await request.post(`/api/v1/businesses/${tenant.businessId}/sms`, {
    headers: { 'x-api-key': process.env.PLATFORM_API_KEY! },
    data: { sender_type: 'staff', staff_id: colleague, messages: [{ client_id: client.id, message: 'Friday at 2 works.' }] },
  });
  expect(answered.ok()).toBe(true);
  await expect(timeline).not.toContainText('Friday at 2 works.');

  const composer = page.getByRole('textbox', { name: 'SMS message' });
  await composer.fill('Yes, Friday is free!');
  await page.getByRole('button', { name: 'Send', exact: true }).click();
  const notice = page.getByTestId('collision-notice');
  await expect(notice).toContainText('1 reply by someone else');
  await expect(timeline).toContainText('Friday at 2 works.');

  await notice.getByRole('button', { name: 'Keep editing' }).click();
  await expect(notice).toBeHidden();
  await expect(composer).toHaveValue('Yes, Friday is free!');
  await composer.fill('Sam has you at 2 on Friday, see you then!');
  await page.getByRole('button', { name: 'Send', exact: true }).click();
  await expect(composer).toHaveValue('');
  await expect(notice).toBeHidden();
  await expect(timeline).toContainText('Sam has you at 2 on Friday, see you then!');
  const sql = database();
  try {
    const sent = await sql`select content from messages where client_id = ${client.id} and direction = 'outbound' order by id`;
    expect(sent.map((m) => m.content)).toEqual(['Friday at 2 works.', 'Sam has you at 2 on Friday, see you then!']);
  } finally {
    await sql.end();
  }
});
