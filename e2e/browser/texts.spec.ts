import type { APIRequestContext, Page } from '@playwright/test';
import { expect, test } from './fixtures';
import { addClient, database, equipBusiness, inboundSms } from './support';

/**
 * Texts a front desk can trust (issue 35, items 4, 6 and 7): list previews that never pass a note
 * off as a text and put the client's unread message first; a failed text retried and a scheduled
 * one edited from the timeline; a composer, a sign-in page and a favicon in plain words, with no
 * failing request on the way.
 */

const api = (request: APIRequestContext, businessId: number) => {
  const headers = { 'x-api-key': process.env.PLATFORM_API_KEY! };
  const base = `/api/v1/businesses/${businessId}`;
  return async (path: string, data: unknown) => {
    const res = await request.post(`${base}${path}`, { headers, data });
    expect(res.ok(), `${path}: ${await res.text()}`).toBe(true);
    return res.json();
  };
};

const row = (page: Page, name: string) => page.getByRole('option', { name: new RegExp(`^${name}`) });
const preview = (page: Page, name: string) => row(page, name).getByTestId('conversation-preview');

/**
 * Every answer of ours of 400 or more, and every request to us that failed, while the page is used.
 * Ours only: the voice SDK's sounds come from Twilio's CDN, which this machine cannot reach.
 */
function watchFailures(page: Page): string[] {
  const failures: string[] = [];
  const ours = (url: string) => url.startsWith(process.env.PUBLIC_BASE_URL!);
  page.on('response', (res) => {
    if (ours(res.url()) && res.status() >= 400) failures.push(`${res.status()} ${res.url()}`);
  });
  page.on('requestfailed', (req) => {
    // A stream or fetch the page itself ended by navigating away is not a failure of the product.
    if (ours(req.url()) && !/ERR_ABORTED/.test(req.failure()?.errorText ?? ''))
      failures.push(`${req.failure()?.errorText} ${req.url()}`);
  });
  return failures;
}

test('previews tell a note, a waiting text and an unread reply apart; the composer and sign-in speak plainly', async ({
  page,
  tenant,
  request,
}) => {
  const post = api(request, tenant.businessId);
  const business = await equipBusiness(tenant.businessId);
  const [ana, ben, cara] = await Promise.all([
    addClient(tenant.businessId, 'Ana Unread'),
    addClient(tenant.businessId, 'Ben Noted'),
    addClient(tenant.businessId, 'Cara Waiting'),
  ]);
  // Ana confirmed, then our promo went out: her unread reply is the preview.
  await inboundSms(request, ana.phone, business.smsNumber, 'Confirmed, thank you!');
  await post('/sms/record', {
    sender_type: 'staff',
    messages: [{ client_id: ana.id, message: 'This week only: 20% off color' }],
  });
  // Ben: a text, then a note on top.
  await post('/sms/record', { sender_type: 'staff', messages: [{ client_id: ben.id, message: 'See you Friday' }] });
  const { data } = await post(`/conversations/${(await post('/conversations', { client_id: ben.id })).conversation_id}/notes`, {
    content: 'Client prefers texts after 5pm',
  });
  expect(data.message_type).toBe('NOTE');
  // Cara: a reminder waiting to go.
  await post('/sms', {
    sender_type: 'staff',
    send_at: new Date(Date.now() + 86_400_000).toISOString(),
    messages: [{ client_id: cara.id, message: 'Reminder: your visit is tomorrow' }],
  });

  const failures = watchFailures(page);
  // Signed out, the page says what to do.
  await page.goto('/login');
  await expect(page.getByRole('heading', { name: 'Sign in' })).toBeVisible();
  await expect(page.getByRole('main')).toContainText('where you usually click Inbox');
  await expect(page.getByRole('main')).toContainText('Ask your manager');
  await expect(page.getByRole('main')).not.toContainText('business platform');

  await page.goto(tenant.loginUrl);
  await expect(row(page, 'Ben Noted')).toBeVisible();
  // A favicon, and it is there.
  const icon = await page.locator('link[rel="icon"]').first().getAttribute('href');
  expect((await request.get(icon!)).status()).toBe(200);

  await expect(preview(page, 'Ana Unread')).toHaveText('Confirmed, thank you!');
  await expect(row(page, 'Ben Noted')).not.toContainText('SMS');
  await expect(preview(page, 'Ben Noted')).toHaveText('Note: Client prefers texts after 5pm');
  await expect(preview(page, 'Ben Noted')).toHaveAttribute('data-kind', 'note');
  await expect(preview(page, 'Cara Waiting')).toHaveText('Scheduled · Reminder: your visit is tomorrow');
  await expect(row(page, 'Cara Waiting')).toContainText('SMS');
  await page.screenshot({ path: test.info().outputPath('previews.png') });

  // The composer's button says what will happen.
  await row(page, 'Ben Noted').click();
  const composer = page.getByRole('textbox', { name: 'SMS message' });
  const when = page.getByRole('combobox', { name: 'Send later' });
  const send = page.getByRole('form', { name: 'Composer' }).getByRole('button', { name: /^(Send|Schedule)/ });
  await composer.fill('Your color is ready to book.');
  await expect(send).toHaveText('Send');
  await expect(when.locator('option').first()).toHaveText('Now');
  await when.selectOption({ label: 'Choose a time…' });
  await expect(send).toHaveText('Schedule');
  await expect(send).toBeDisabled();
  await when.selectOption({ label: 'Tomorrow 9:00' });
  await expect(send).toHaveText(/^Send at (Sun|Mon|Tue|Wed|Thu|Fri|Sat) 9:00$/);
  const summary = page.getByTestId('send-later-summary');
  expect((await summary.innerText()).trim()).not.toMatch(/·$/m);
  await when.selectOption({ label: 'Now' });
  // Texts counted as billed; the technical words only in the tooltip.
  const counter = page.getByTestId('sms-counter');
  await expect(counter).toHaveText('1 text');
  await composer.fill('a'.repeat(170));
  await expect(counter).toHaveText('2 texts');
  await expect(counter.getByTitle(/GSM-7: 2 segments/)).toBeVisible();
  await composer.fill('Your color is ready to book.');
  await send.click();
  await expect(composer).toHaveValue('');
  // Our text is now the latest: Ben's preview follows (live), under SMS.
  await expect(preview(page, 'Ben Noted')).toHaveText('Your color is ready to book.');

  // The sandbox phone shows the client only what reached them: never the note.
  await page.goto('/sandbox');
  await page.getByRole('searchbox', { name: 'Search clients' }).fill('Ben Noted');
  const client = page.getByRole('button', { name: /Ben Noted/ });
  await expect(client).toContainText('Your color is ready to book.');
  await client.click();
  await expect(page.getByTestId('sms-bubble')).toHaveCount(2);
  await expect(page.getByRole('list', { name: 'SMS thread' })).not.toContainText('prefers texts');

  expect(failures).toEqual([]);
});

test('a failed text is retried as the same message; a scheduled one is edited (words and time), then canceled', async ({
  page,
  tenant,
  request,
}) => {
  const post = api(request, tenant.businessId);
  const business = await equipBusiness(tenant.businessId);
  const dana = await addClient(tenant.businessId, 'Dana Retry');
  await inboundSms(request, dana.phone, business.smsNumber, 'Can I book for Saturday?');
  // Our answer went out, and the carrier reported it undelivered (handset unreachable).
  const recorded = await post('/sms/record', {
    sender_type: 'staff',
    messages: [{ client_id: dana.id, message: 'Saturday 10:00 works!' }],
  });
  const [failedId] = recorded.message_ids as number[];
  await post('/sms/status', { message_id: failedId, status: 'undelivered', error_code: '30003' });

  await page.goto(tenant.loginUrl);
  await row(page, 'Dana Retry').click();
  const failed = page.locator(`[data-message-id="${failedId}"]`);
  await expect(failed).toHaveAttribute('data-state', 'failed');
  const fix = failed.getByTestId('failed-fix');
  await expect(fix).toContainText("The client's phone could not be reached");
  await expect(fix).toContainText('Retry sends this same text again, once');
  await page.screenshot({ path: test.info().outputPath('failed-text.png') });
  await fix.getByRole('button', { name: 'Retry' }).click();
  await expect(failed.getByTestId('message-status')).toHaveText(/Queued|Sending|Sent|Delivered/);
  await expect(failed).not.toHaveAttribute('data-state', 'failed');
  await expect(fix).toHaveCount(0);

  const sql = database();
  try {
    const rows = await sql<{ id: number; attempts: number }[]>`
      select id, attempts from messages where business_id = ${tenant.businessId} and content = 'Saturday 10:00 works!'`;
    expect(rows).toEqual([{ id: failedId, attempts: 1 }]);

    // Schedule a text, then edit it: words and time are filled in, and both change.
    const composer = page.getByRole('textbox', { name: 'SMS message' });
    await composer.fill('Reminder: Saturday 10:00');
    await page.getByRole('combobox', { name: 'Send later' }).selectOption({ label: 'Tomorrow 9:00' });
    await page.getByRole('button', { name: /^Send at / }).click();
    const scheduled = page.locator('[data-message-type=TEXT]').filter({ hasText: 'Reminder: Saturday 10:00' });
    await expect(scheduled.getByTestId('message-status')).toContainText('Scheduled for');
    await scheduled.getByRole('button', { name: 'Edit' }).click();
    const form = scheduled.getByRole('form', { name: 'Edit scheduled message' });
    const words = form.getByRole('textbox', { name: 'Text' });
    await expect(words).toHaveValue('Reminder: Saturday 10:00');
    const time = form.getByLabel(/^New send time/);
    await expect(time).toHaveValue(/T09:00$/);
    await page.screenshot({ path: test.info().outputPath('edit-scheduled.png') });
    const day = new Date(Date.now() + 3 * 86_400_000).toISOString().slice(0, 10);
    await words.fill('Reminder: Saturday 11:00 (moved)');
    await time.fill(`${day}T14:30`);
    await form.getByRole('button', { name: 'Save changes' }).click();
    await expect(form).toHaveCount(0);
    const edited = page.locator('[data-message-type=TEXT]').filter({ hasText: 'Reminder: Saturday 11:00 (moved)' });
    await expect(edited.getByTestId('message-status')).toContainText('2:30');
    await expect(preview(page, 'Dana Retry')).toHaveText('Scheduled · Reminder: Saturday 11:00 (moved)');
    const [stored] = await sql<{ status: string; n: number }[]>`
      select min(status) as status, count(*)::int as n from messages
      where business_id = ${tenant.businessId} and content like 'Reminder: Saturday%'`;
    expect(stored).toEqual({ status: 'scheduled', n: 1 });

    // Canceled, it no longer looks like a sent text.
    await edited.getByRole('button', { name: 'Cancel' }).click();
    await expect(edited).toHaveAttribute('data-state', 'canceled');
    await expect(edited.getByTestId('message-status')).toHaveText('Canceled before it was sent');
    const look = (el: Element) => {
      const bubble = getComputedStyle(el.querySelector('div')!);
      return { background: bubble.backgroundColor, line: bubble.textDecorationLine };
    };
    await page.screenshot({ path: test.info().outputPath('fixed-texts.png') });
    const canceledLook = await edited.evaluate(look);
    const sentLook = await failed.evaluate(look);
    expect(canceledLook.line).toBe('line-through');
    expect(canceledLook.background).not.toBe(sentLook.background);
  } finally {
    await sql.end();
  }
});
