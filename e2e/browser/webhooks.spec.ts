import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from '@playwright/test';
import { Webhook } from 'standardwebhooks';
import { expect, test } from './fixtures';
import { addStaff } from './support';

/**
 * Settings → Webhooks (docs/api.md#webhooks-you-receive-from-us): an owner adds an address that
 * points at a receiver this test runs, keeps the secret shown once, and watches the e2e server's
 * worker really deliver to it: a test event delivered (200), one failing (500, with the answer's
 * body shown) and then redelivered, a new secret, a 410 turning the address off, deletion. A
 * member of the `staff` role neither sees the link nor can use the page. The server runs with
 * WEBHOOK_ALLOW_PRIVATE_URLS=true (playwright.config.ts), so an http address on 127.0.0.1 is allowed.
 */

type Received = { headers: Record<string, string>; body: string };
type Answer = { status: number; body: string; headers?: Record<string, string> };

async function startReceiver() {
  const received: Received[] = [];
  let answer: Answer = { status: 200, body: '{"ok":true}' };
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      received.push({ headers: req.headers as Record<string, string>, body });
      res.writeHead(answer.status, { 'content-type': 'text/plain', ...answer.headers }).end(answer.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/booking`,
    received,
    answer: (a: Answer) => (answer = a),
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

/** The receiver's check of a request, as a platform does it with the Standard Webhooks library. */
function verified(secret: string, r: Received) {
  return new Webhook(secret).verify(r.body, {
    'webhook-id': r.headers['webhook-id']!,
    'webhook-timestamp': r.headers['webhook-timestamp']!,
    'webhook-signature': r.headers['webhook-signature']!,
  }) as { type: string; data: Record<string, unknown> };
}

async function shownSecret(page: Page, heading: RegExp) {
  const panel = page.getByRole('region', { name: 'Signing secret' });
  await expect(panel.getByRole('heading', { name: heading })).toBeFocused();
  await expect(panel).toContainText('It will not be shown again.');
  const value = await panel.getByRole('textbox', { name: 'Secret' }).inputValue();
  expect(value).toMatch(/^whsec_/);
  await panel.getByRole('button', { name: 'Copy' }).click();
  await expect(panel.getByRole('status')).toHaveText('Copied.');
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(value);
  await panel.getByRole('button', { name: 'Done, I saved it' }).click();
  await expect(panel).toBeHidden();
  return value;
}

test('an owner adds an address, tests it, sees a failure, redelivers it, rotates the secret, and deletes it', async ({
  page,
  context,
  tenant,
}) => {
  test.slow();
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  const receiver = await startReceiver();
  try {
    await page.goto(tenant.loginUrl);
    await page.goto('/inbox');
    await page.getByText('Settings', { exact: true }).click();
    await page.getByRole('link', { name: 'Webhooks' }).click();
    // The list has loaded: the page is hydrated (text typed before would be reset by it).
    await expect(page.getByText('No addresses yet: add the first one.')).toBeVisible();

    const form = page.getByRole('region', { name: 'Add an endpoint' });
    await form.getByRole('textbox', { name: 'Address (URL)' }).fill('ftp://example.com/hooks');
    await form.getByRole('button', { name: 'Add address' }).click();
    await expect(form.getByRole('alert')).toContainText('Address:');
    await form.getByRole('textbox', { name: 'Address (URL)' }).fill(receiver.url);
    await form.getByRole('textbox', { name: 'Description (optional)' }).fill('Booking system');
    await form.getByRole('radio', { name: 'Only the ones I choose' }).check();
    await form.getByRole('checkbox', { name: 'A client opts out' }).check();
    await form.getByRole('checkbox', { name: 'A client’s text or email arrives' }).check();
    await form.getByRole('button', { name: 'Add address' }).click();
    const firstSecret = await shownSecret(page, /^Signing secret for /);

    const endpoint = page.getByTestId('webhook-endpoint').filter({ hasText: receiver.url });
    await expect(endpoint).toContainText('Booking system');
    await expect(endpoint).toContainText('Sends: A client’s text or email arrives · A client opts out');
    await expect(endpoint.getByTestId('endpoint-health')).toHaveText('Working');

    // A test event, delivered: the receiver verifies it with the secret the page showed.
    await endpoint.getByRole('button', { name: 'Send test event' }).click();
    const deliveries = page.getByRole('region', { name: 'Deliveries' });
    const newest = deliveries.getByTestId('webhook-delivery').first();
    await expect(newest.getByTestId('delivery-status')).toHaveText('Delivered');
    await expect(newest.getByTestId('delivery-code')).toHaveText('200');
    await expect(newest).toContainText('Test event');
    expect(receiver.received).toHaveLength(1);
    expect(verified(firstSecret, receiver.received[0]!).type).toBe('webhook.test');
    await newest.getByText('Request body').click();
    await expect(newest.locator('pre').first()).toContainText('"type": "webhook.test"');
    await newest.getByText('Response body').click();
    await expect(newest.getByTestId('delivery-response')).toHaveText('{"ok":true}');

    // A failing answer: its status and body in the list, the address failing. Retry-After holds
    // the automatic retry off for an hour, so what delivers it below is Redeliver.
    receiver.answer({ status: 500, body: 'Booking database is down', headers: { 'retry-after': '3600' } });
    await endpoint.getByRole('button', { name: 'Send test event' }).click();
    await expect(deliveries.getByTestId('webhook-delivery')).toHaveCount(2);
    await expect(newest.getByTestId('delivery-status')).toHaveText('Failed, will retry');
    await expect(newest.getByTestId('delivery-code')).toHaveText('500');
    await newest.getByText('Response body').click();
    await expect(newest.getByTestId('delivery-response')).toHaveText('Booking database is down');
    await expect(newest).toContainText('Next try');
    await expect(endpoint.getByTestId('endpoint-health')).toContainText('Failing since');

    // The filter and back.
    await deliveries.getByLabel('Show').selectOption({ label: 'Delivered' });
    await expect(deliveries.getByTestId('webhook-delivery')).toHaveCount(1);
    await expect(deliveries.getByTestId('delivery-status')).toHaveText('Delivered');
    await deliveries.getByLabel('Show').selectOption({ label: 'All' });
    await expect(deliveries.getByTestId('webhook-delivery')).toHaveCount(2);

    // Redelivered once the receiver is fixed: the same event (webhook-id), delivered on its first new attempt.
    receiver.answer({ status: 200, body: 'thanks' });
    await newest.getByRole('button', { name: 'Redeliver' }).click();
    await expect(newest.getByTestId('delivery-status')).toHaveText('Delivered');
    await expect(newest.getByTestId('delivery-attempts')).toHaveText('1');
    await expect(newest.getByTestId('delivery-response')).toHaveText('thanks');
    await expect(endpoint.getByTestId('endpoint-health')).toHaveText('Working');
    expect(receiver.received).toHaveLength(3);
    expect(receiver.received[2]!.headers['webhook-id']).toBe(receiver.received[1]!.headers['webhook-id']);

    // A new secret, shown once; the next delivery verifies with it.
    await endpoint.getByRole('button', { name: 'New secret' }).click();
    const secondSecret = await shownSecret(page, /^New signing secret for /);
    expect(secondSecret).not.toBe(firstSecret);
    await endpoint.getByRole('button', { name: 'Send test event' }).click();
    await expect(deliveries.getByTestId('webhook-delivery')).toHaveCount(3);
    await expect(newest.getByTestId('delivery-status')).toHaveText('Delivered');
    expect(verified(secondSecret, receiver.received[3]!).type).toBe('webhook.test');

    // 410 Gone turns the address off, with the reason; Turn on brings it back.
    receiver.answer({ status: 410, body: 'gone' });
    await endpoint.getByRole('button', { name: 'Send test event' }).click();
    await expect(endpoint.getByTestId('endpoint-health')).toContainText('The endpoint answered 410 Gone');
    await expect(endpoint.getByRole('button', { name: 'Send test event' })).toBeDisabled();
    await expect(newest.getByRole('button', { name: 'Redeliver' })).toBeDisabled();
    await endpoint.getByRole('button', { name: 'Turn on' }).click();
    await expect(endpoint.getByTestId('endpoint-health')).toHaveText('Working');

    // Edit: every event from now on.
    await endpoint.getByRole('button', { name: 'Edit' }).click();
    const edit = page.getByRole('region', { name: 'Edit endpoint' });
    await expect(edit.getByRole('textbox', { name: 'Address (URL)' })).toHaveValue(receiver.url);
    await edit.getByRole('radio', { name: 'All events, including kinds added later' }).check();
    await edit.getByRole('button', { name: 'Save changes' }).click();
    await expect(endpoint).toContainText('Sends: all events');

    // Delete asks first; Cancel has the focus.
    await endpoint.getByRole('button', { name: 'Delete' }).click();
    const confirm = endpoint.getByRole('group', { name: 'Confirm delete' });
    await expect(confirm.getByRole('button', { name: 'Cancel' })).toBeFocused();
    await confirm.getByRole('button', { name: 'Yes, delete' }).click();
    await expect(page.getByText('No addresses yet: add the first one.')).toBeVisible();
    await expect(deliveries).toBeHidden();
  } finally {
    await receiver.close();
  }
});

test('on a phone, the page fits: no text or button off the screen', async ({ page, tenant, request }) => {
  await page.setViewportSize({ width: 390, height: 844 });
  const api = `/api/v1/businesses/${tenant.businessId}/webhook-endpoints`;
  const headers = { 'x-api-key': process.env.PLATFORM_API_KEY! };
  const long = `http://127.0.0.1:9/${'very-long-path-segment/'.repeat(8)}hooks?tenant=${'x'.repeat(60)}`;
  const created = await request.post(api, { headers, data: { url: long, description: 'Marketing platform (staging copy)' } });
  expect(created.ok()).toBe(true);
  const { id } = (await created.json()) as { id: number };
  // Nothing listens on port 9: the delivery fails with a connection error, which the list shows.
  expect((await request.post(`${api}/${id}/test`, { headers })).ok()).toBe(true);

  await page.goto(tenant.loginUrl);
  await page.goto('/inbox');
  // The inbox's bar keeps Sign out and the settings menu on the screen; the menu's links fit too.
  await expect(page.getByRole('button', { name: 'Sign out' })).toBeInViewport({ ratio: 1 });
  await page.getByText('Settings', { exact: true }).click();
  await expect(page.getByRole('link', { name: 'Webhooks' })).toBeInViewport({ ratio: 1 });
  await page.getByRole('link', { name: 'Webhooks' }).click();
  const endpoint = page.getByTestId('webhook-endpoint');
  await endpoint.getByRole('button', { name: 'Show deliveries' }).click();
  const delivery = page.getByTestId('webhook-delivery').first();
  await expect(delivery.getByTestId('delivery-status')).toHaveText('Failed, will retry');
  await delivery.getByText('Request body').click();
  await delivery.getByText('Response body').click();
  await page.getByRole('radio', { name: 'Only the ones I choose' }).check();

  const overflow = await page.evaluate(() => {
    const width = document.documentElement.clientWidth;
    // The settings column scrolls (overflow: auto), so its own width is checked too, not only the page's.
    const main = document.querySelector('main')!;
    const wide = [main, ...main.querySelectorAll('*')].filter((el) => el.scrollWidth > el.clientWidth + 1);
    const offScreen = [...document.querySelectorAll('button, input, select, summary, a')].filter((el) => {
      const box = el.getBoundingClientRect();
      return box.width > 0 && (box.left < 0 || box.right > width);
    });
    return {
      page: document.documentElement.scrollWidth - width,
      wide: wide.map((el) => el.outerHTML.slice(0, 80)),
      offScreen: offScreen.map((el) => el.outerHTML.slice(0, 80)),
    };
  });
  expect(overflow).toEqual({ page: 0, wide: [], offScreen: [] });
});

test('a member of the staff role sees no Webhooks link and is told the page needs an owner or a manager', async ({
  browser,
  tenant,
  request,
}) => {
  const staffId = await addStaff(tenant.businessId, 'Sam Desk');
  const res = await request.post('/api/v1/auth/token', {
    headers: { 'x-api-key': process.env.PLATFORM_API_KEY! },
    data: { business_id: tenant.businessId, staff_id: staffId },
  });
  const { login_url } = (await res.json()) as { login_url: string };
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(login_url);
  await page.goto('/inbox');
  await expect(page.getByTestId('signed-in-as')).toContainText('Sam Desk');
  await page.getByText('Settings', { exact: true }).click();
  await expect(page.getByRole('link', { name: 'Saved replies' })).toBeVisible();
  await expect(page.getByRole('link', { name: 'Webhooks' })).toHaveCount(0);

  await page.goto('/settings/webhooks');
  // (Next.js's route announcer is an empty alert of its own.)
  await expect(page.getByRole('alert').filter({ hasText: 'needs the owner or manager role' })).toBeVisible();
  await expect(page.getByRole('button', { name: 'Add address' })).toHaveCount(0);
  await context.close();
});
