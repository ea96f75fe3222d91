import type { Page } from '@playwright/test';
import { expect, test } from './fixtures';
import { addClient, addStaff, clientTexted, database, equipBusiness, inboundSms } from './support';

/**
 * The staff inbox in Chromium against the production build: every client message arrives through
 * the real, signed webhooks; everything staff do goes through tRPC.
 */

const conversation = (page: Page, name: string) => page.getByRole('option', { name: new RegExp(`^${name}`) });
const heading = (page: Page) => page.getByRole('main').getByRole('heading', { level: 2 });
const timeline = (page: Page) => page.getByRole('log', { name: 'Messages' });

/** Milliseconds, measured in the browser, from a click on a conversation to its header showing. */
async function switchTo(page: Page, name: string): Promise<number> {
  return page.evaluate(async (who) => {
    const start = performance.now();
    (document.querySelector(`[role=option][aria-label^="${who}"]`) as HTMLElement).click();
    while (!document.querySelector('main h2')?.textContent?.includes(who)) await new Promise((r) => requestAnimationFrame(r));
    return performance.now() - start;
  }, name);
}

test('filter, open a conversation, send an SMS and watch it reach delivered', async ({ page, tenant, request }) => {
  const business = await equipBusiness(tenant.businessId);
  const ana = await addClient(tenant.businessId, 'Ana Lopez');
  const ben = await addClient(tenant.businessId, 'Ben Carter');
  await inboundSms(request, ana.phone, business.smsNumber, 'Can I move my color appointment to Friday?');
  await inboundSms(request, ben.phone, business.smsNumber, 'Running 5 minutes late');

  await page.goto(tenant.loginUrl);
  await page.goto('/inbox');
  await expect(conversation(page, 'Ben Carter')).toBeVisible();
  const interactiveMs = await page.evaluate(() => performance.now());
  test.info().annotations.push({ type: 'inbox interactive (ms after navigation)', description: interactiveMs.toFixed(0) });
  await expect(page.getByRole('heading', { name: tenant.businessName })).toBeVisible();
  await expect(conversation(page, 'Ben Carter')).toHaveAttribute('aria-label', /1 unread/);
  await expect(page).toHaveTitle('(2) Inbox');

  // Filters: the SMS channel keeps both, Email has none, Resolved has none.
  await page.getByRole('group', { name: 'Channel' }).getByRole('button', { name: /SMS/ }).click();
  await expect(conversation(page, 'Ana Lopez')).toBeVisible();
  await page.getByRole('group', { name: 'Channel' }).getByRole('button', { name: /SMS/ }).click();
  await page.getByRole('group', { name: 'Channel' }).getByRole('button', { name: /Email/ }).click();
  await expect(page.getByText('No conversations here.')).toBeVisible();
  await page.getByRole('group', { name: 'Channel' }).getByRole('button', { name: /Email/ }).click();
  await expect(page.getByRole('group', { name: 'Status' }).getByRole('button', { name: /Open/ })).toContainText('2');
  await page.screenshot({ path: test.info().outputPath('inbox.png') });

  await conversation(page, 'Ana Lopez').click();
  await expect(heading(page)).toHaveText('Ana Lopez');
  await expect(timeline(page)).toContainText('Can I move my color appointment to Friday?');
  await expect(page.getByRole('complementary', { name: 'Client details' })).toContainText(ana.phone);
  // Opening reads it: the badge goes and the title follows.
  await expect(conversation(page, 'Ana Lopez')).not.toHaveAttribute('aria-label', /unread/);
  await expect(page).toHaveTitle('(1) Inbox');

  const composer = page.getByRole('textbox', { name: 'SMS message' });
  await composer.fill('See you Friday at 3 — reply STOP to opt out');
  // The counter speaks of texts; the encoding is in its tooltip (the em dash is not GSM-7).
  await expect(page.getByTestId('sms-counter')).toContainText('1 text');
  await expect(page.getByTestId('sms-counter')).toContainText('each text holds 70 characters');
  await expect(page.getByTestId('sms-counter').getByTitle(/UCS-2/)).toBeVisible();
  await composer.fill('See you Friday at 3!');
  await expect(page.getByTestId('sms-counter').getByTitle(/GSM-7/)).toHaveText('1 text');
  await page.getByRole('button', { name: 'Send', exact: true }).click();
  const sent = page.locator('[data-message-type=TEXT]').filter({ hasText: 'See you Friday at 3!' });
  await expect(sent).toBeVisible();
  await expect(composer).toHaveValue('');
  await expect(sent.getByTestId('message-status')).toHaveText('Delivered', { timeout: 20_000 });
  await page.screenshot({ path: test.info().outputPath('conversation.png') });

  // Switching between conversations already visited (warm cache).
  await switchTo(page, 'Ben Carter');
  const switches = [await switchTo(page, 'Ana Lopez'), await switchTo(page, 'Ben Carter'), await switchTo(page, 'Ana Lopez')];
  test
    .info()
    .annotations.push({ type: 'conversation switch, warm (ms)', description: switches.map((ms) => ms.toFixed(0)).join(', ') });
  console.log(
    `inbox interactive ${interactiveMs.toFixed(0)} ms; warm switches ${switches.map((ms) => ms.toFixed(0)).join(', ')} ms`,
  );
});

test('a reply from the sandbox phone appears live in the inbox, with the unread badge and title', async ({
  page,
  browser,
  tenant,
  request,
}) => {
  await clientTexted(request, tenant.businessId, 'Ana Lopez', 'First question');
  await page.goto(tenant.loginUrl);
  await expect(conversation(page, 'Ana Lopez')).toHaveAttribute('aria-label', /1 unread/);
  await expect(page).toHaveTitle('(1) Inbox');
  // The inbox's own <title> is the page's only one: a second (Next.js's metadata) was committed after
  // the count now and then, and the tab lost it until the count changed again.
  await expect(page.locator('title')).toHaveCount(1);

  // A second browser context plays the client's phone on /sandbox.
  const phoneContext = await browser.newContext();
  const phone = await phoneContext.newPage();
  await phone.goto(await tenant.newLoginUrl());
  await phone.goto(`${process.env.PUBLIC_BASE_URL}/sandbox`);
  await phone.getByRole('searchbox', { name: 'Search clients' }).fill('Ana Lopez');
  await phone.getByRole('button', { name: /Ana Lopez/ }).click();
  const reply = async (text: string) => {
    await phone.getByRole('textbox', { name: 'Reply as client' }).fill(text);
    await phone.getByRole('button', { name: 'Send SMS reply' }).click();
  };

  await reply('Second question, sent live');
  await expect(conversation(page, 'Ana Lopez')).toHaveAttribute('aria-label', /2 unread/);
  await expect(conversation(page, 'Ana Lopez')).toContainText('Second question, sent live');

  await conversation(page, 'Ana Lopez').click();
  await expect(page).toHaveTitle('Inbox');
  await reply('Third, while you read');
  await expect(timeline(page)).toContainText('Third, while you read');
  await phoneContext.close();

  // A colleague (here through the REST API) adds a note and takes the conversation: both show live.
  const colleague = await addStaff(tenant.businessId, 'Sarah Colorist');
  const conversationId = Number(new URL(page.url()).searchParams.get('c'));
  const api = (path: string, data: unknown) =>
    request.post(`/api/v1/businesses/${tenant.businessId}/conversations/${conversationId}/${path}`, {
      headers: { 'x-api-key': process.env.PLATFORM_API_KEY! },
      data,
    });
  expect((await api('notes', { content: 'I will call her back', staff_id: colleague })).status()).toBe(200);
  await expect(page.locator('[data-message-type=NOTE]')).toContainText('I will call her back');
  expect((await api('assign', { staff_id: colleague })).status()).toBe(200);
  await expect(page.getByRole('complementary', { name: 'Client details' })).toContainText('Sarah Colorist');
  await expect(conversation(page, 'Ana Lopez')).toContainText('Sarah Colorist');
});

test('reads that fail for a passing reason are tried again: counts and the unread title still arrive', async ({
  page,
  tenant,
  request,
}) => {
  await clientTexted(request, tenant.businessId, 'Ana Lopez', 'Are you open on Sunday?');
  // The first two answers to any batch carrying the filter counts or the unread title's list are a
  // 503, as from a server busy or restarting; a client without retries would keep "Counts unavailable".
  let refused = 0;
  await page.route(/\/api\/trpc\/[^?]*inbox\.(filters|list)/, async (route) => {
    if (route.request().method() === 'GET' && refused < 2) {
      refused++;
      return route.fulfill({ status: 503, contentType: 'text/plain', body: 'Service Unavailable' });
    }
    return route.continue();
  });
  await page.goto(tenant.loginUrl);
  await expect(conversation(page, 'Ana Lopez')).toHaveAttribute('aria-label', /1 unread/);
  await expect(page).toHaveTitle('(1) Inbox');
  await expect(page.getByRole('group', { name: 'Status' }).getByRole('button', { name: /Open/ })).toContainText('1');
  await expect(page.getByText('Counts unavailable')).toHaveCount(0);
  expect(refused).toBe(2);
});

test('the tab names the page: the inbox with its count, also when settings lead back to it', async ({
  page,
  tenant,
  request,
}) => {
  await clientTexted(request, tenant.businessId, 'Ana Lopez', 'Are you open late on Thursday?');
  await page.goto(tenant.loginUrl);
  await expect(page).toHaveTitle('(1) Inbox');
  await page.goto('/settings/opening-hours');
  await expect(page).toHaveTitle('Settings · Inbox');
  // A client-side navigation: Next.js takes its metadata's title away, the inbox brings its own.
  await page.getByRole('link', { name: 'Back to the inbox' }).click();
  await expect(page).toHaveURL(/\/inbox/);
  await expect(page).toHaveTitle('(1) Inbox');
  await expect(page.locator('title')).toHaveCount(1);
  await page.goBack();
  await expect(page).toHaveTitle('Settings · Inbox');
  await page.goto('/reports');
  await expect(page).toHaveTitle('Reports · Inbox');
});

test('after the live stream drops, what happened meanwhile shows once it is back', async ({ page, tenant, request }) => {
  // Keep a handle on the page's EventSources so the test can cut the live stream like a network blip.
  await page.addInitScript(() => {
    const Original = window.EventSource;
    const sources: EventSource[] = [];
    (window as unknown as { __sources: EventSource[] }).__sources = sources;
    window.EventSource = class extends Original {
      constructor(url: string | URL, init?: EventSourceInit) {
        super(url, init);
        sources.push(this);
      }
    };
  });
  const { business, client: ana } = await clientTexted(request, tenant.businessId, 'Ana Lopez', 'Before the outage');
  await page.goto(tenant.loginUrl);
  await conversation(page, 'Ana Lopez').click();
  await expect(timeline(page)).toContainText('Before the outage');

  // The stream breaks and cannot come back for a while; a message arrives meanwhile.
  await page.route('**/api/trpc/inbox.events**', (route) => route.abort('connectionreset'));
  await page.evaluate(() => {
    for (const source of (window as unknown as { __sources: EventSource[] }).__sources) {
      source.close();
      source.dispatchEvent(new Event('error'));
    }
  });
  await inboundSms(request, ana.phone, business.smsNumber, 'Sent while the stream was down');
  await page.waitForTimeout(1500);

  await page.unroute('**/api/trpc/inbox.events**');
  await expect(timeline(page)).toContainText('Sent while the stream was down', { timeout: 15_000 });
});

test('the composer says why a channel cannot be used', async ({ page, tenant, request }) => {
  const { client: ana } = await clientTexted(request, tenant.businessId, 'Ana Lopez', 'STOP');
  const sql = database();
  // Opt-outs are kept by number (docs/api.md#opt-out): the STOP above recorded it; made sure of here.
  await sql`insert into opt_outs (business_id, channel, address, source)
            select business_id, 'sms', phone_number, 'keyword' from clients where id = ${ana.id} on conflict do nothing`;
  await sql`update clients set email = null where id = ${ana.id}`;
  await sql.end();
  await page.goto(tenant.loginUrl);
  await conversation(page, 'Ana Lopez').click();
  await expect(page.getByTestId('composer-blocked')).toContainText('opted out of text messages');
  await expect(page.getByRole('textbox', { name: 'SMS message' })).toBeDisabled();
  await expect(page.getByRole('complementary', { name: 'Client details' }).getByTestId('sms-consent')).toHaveText('Opted out');
  await page.getByRole('tab', { name: 'Email' }).click();
  await expect(page.getByTestId('composer-blocked')).toContainText('no email address');
  await page.getByRole('tab', { name: 'Note' }).click();
  await expect(page.getByTestId('composer-blocked')).toHaveCount(0);
  await expect(page.getByRole('textbox', { name: 'Internal note' })).toBeEnabled();

  // Every control on the page has a name assistive technology can read.
  const unnamed = await page.evaluate(() =>
    [...document.querySelectorAll('button, input, select, textarea, [role=option], [role=tab]')]
      .filter((el) => (el as HTMLElement).offsetParent !== null)
      .filter((el) => {
        const labelled =
          el.getAttribute('aria-label') ||
          el.getAttribute('aria-labelledby') ||
          (el.id && document.querySelector(`label[for="${el.id}"]`)) ||
          el.closest('label');
        return !labelled && !(el.textContent ?? '').trim();
      })
      .map((el) => el.outerHTML.slice(0, 80)),
  );
  expect(unnamed).toEqual([]);
});

test('notes, assignment, resolve, and an inbound message reopens the conversation', async ({ page, tenant, request }) => {
  const { business, client: ana } = await clientTexted(request, tenant.businessId, 'Ana Lopez', 'Is Sarah in on Saturday?');
  await page.goto(tenant.loginUrl);
  await conversation(page, 'Ana Lopez').click();
  await expect(heading(page)).toHaveText('Ana Lopez');

  await page.getByRole('tab', { name: 'Note' }).click();
  await page.getByRole('textbox', { name: 'Internal note' }).fill('Prefers Sarah for <b>color</b>');
  await page.getByRole('button', { name: 'Add note' }).click();
  const note = page.locator('[data-message-type=NOTE]');
  await expect(note).toContainText('Internal note');
  await expect(note).toContainText('Prefers Sarah for <b>color</b>'); // text, never markup

  await page.getByLabel('Assignee').selectOption({ label: `${tenant.staffName} (me)` });
  await expect(page.getByRole('complementary', { name: 'Client details' })).toContainText(tenant.staffName);
  await expect(conversation(page, 'Ana Lopez')).toContainText(tenant.staffName);

  await page.getByRole('button', { name: 'Resolve', exact: true }).click();
  await expect(page.getByTestId('conversation-status')).toHaveText('resolved');
  await expect(conversation(page, 'Ana Lopez')).toHaveCount(0); // gone from the Open view
  await inboundSms(request, ana.phone, business.smsNumber, 'Actually, one more question');
  await expect(page.getByTestId('conversation-status')).toHaveText('open');
  await expect(timeline(page)).toContainText('Actually, one more question');
  await expect(conversation(page, 'Ana Lopez')).toBeVisible();

  await page.getByLabel('Pending or snooze').selectOption({ label: 'Tomorrow 9:00' });
  await expect(page.getByTestId('conversation-status')).toHaveText(/^snoozed until /);
  await expect(page.getByRole('group', { name: 'Status' }).getByRole('button', { name: /Snoozed/ })).toContainText('1');
  await page.getByLabel('Pending or snooze').selectOption({ label: 'Mark pending' });
  await expect(page.getByTestId('conversation-status')).toHaveText('pending');
});

test('search across the business and within a conversation, with highlighting', async ({ page, tenant, request }) => {
  const business = await equipBusiness(tenant.businessId);
  const ana = await addClient(tenant.businessId, 'Ana Lopez');
  const ben = await addClient(tenant.businessId, 'Ben Carter');
  await inboundSms(request, ana.phone, business.smsNumber, 'Can I book a COLOR appointment for Friday?');
  for (let i = 0; i < 3; i++) await inboundSms(request, ana.phone, business.smsNumber, `Filler message ${i}`);
  await inboundSms(request, ben.phone, business.smsNumber, 'Do you sell the gloss?');
  await page.goto(tenant.loginUrl);
  await expect(conversation(page, 'Ana Lopez')).toBeVisible();

  await page.keyboard.press('/');
  await expect(page.getByRole('combobox', { name: 'Search clients and messages' })).toBeFocused();
  await page.keyboard.type('color');
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('search-summary')).toHaveText('1 result for “color”');
  const result = page.getByRole('list', { name: 'Search results' }).getByRole('button');
  await expect(result).toHaveCount(1);
  await expect(result.locator('mark')).toHaveText('COLOR');
  await result.click();
  await expect(heading(page)).toHaveText('Ana Lopez');
  const hit = page.locator('[data-message-type=TEXT]').filter({ hasText: 'COLOR appointment' });
  await expect(hit.locator('mark')).toHaveText('COLOR');
  await expect(hit).toHaveClass(/targeted/);

  // Opened from a search, the conversation's own search bar carries the term.
  const within = page.getByRole('searchbox', { name: 'Search this conversation' });
  await expect(within).toHaveValue('color');
  await within.fill('fi');
  await within.press('Enter');
  await expect(page.getByTestId('conversation-search-count')).toHaveText('Type at least 3 characters');
  await within.fill('filler');
  await within.press('Enter');
  await expect(page.getByTestId('conversation-search-count')).toHaveText('3 matches');
  await expect(timeline(page).locator('mark')).toHaveCount(3);

  // A business-wide hit in the conversation already open jumps to its message too.
  const everywhere = page.getByRole('combobox', { name: 'Search clients and messages' });
  await everywhere.fill('Filler message 1');
  await everywhere.press('Enter');
  await expect(page.getByTestId('search-summary')).toHaveText('1 result for “Filler message 1”');
  await page.getByRole('list', { name: 'Search results' }).getByRole('button').click();
  await expect(page.locator('[data-message-type=TEXT]').filter({ hasText: 'Filler message 1' })).toHaveClass(/targeted/);
  await expect(hit).not.toHaveClass(/targeted/);
});

test('keyboard: j/k move, a assigns to me, e resolves, / searches, c composes, Esc goes back', async ({
  page,
  tenant,
  request,
}) => {
  const business = await equipBusiness(tenant.businessId);
  for (const name of ['Cara One', 'Dan Two', 'Eve Three']) {
    const client = await addClient(tenant.businessId, name);
    await inboundSms(request, client.phone, business.smsNumber, `Hello from ${name}`);
  }
  await page.goto(tenant.loginUrl);
  await expect(conversation(page, 'Cara One')).toBeVisible();

  await page.keyboard.press('j'); // newest first: Eve
  await expect(heading(page)).toHaveText('Eve Three');
  await page.keyboard.press('j');
  await expect(heading(page)).toHaveText('Dan Two');
  await page.keyboard.press('k');
  await expect(heading(page)).toHaveText('Eve Three');
  await page.keyboard.press('a');
  await expect(page.getByLabel('Assignee')).toHaveValue(String(tenant.staffId));
  await page.keyboard.press('e');
  await expect(page.getByTestId('conversation-status')).toHaveText('resolved');
  await page.keyboard.press('c');
  await expect(page.getByRole('textbox', { name: 'SMS message' })).toBeFocused();
  await page.keyboard.type('jk'); // typing is never a shortcut
  await expect(page.getByRole('textbox', { name: 'SMS message' })).toHaveValue('jk');
  await page.keyboard.press('Escape');
  await page.keyboard.press('Escape');
  await expect(page.getByText('Select a conversation.')).toBeVisible();
});

test('phone layout: list, then conversation, then back', async ({ page, tenant, request }) => {
  await page.setViewportSize({ width: 390, height: 844 });
  await clientTexted(request, tenant.businessId, 'Ana Lopez', 'Hi from my phone');
  await page.goto(tenant.loginUrl);
  await conversation(page, 'Ana Lopez').click();
  await expect(heading(page)).toHaveText('Ana Lopez');
  await expect(page.getByRole('listbox', { name: 'Conversations' })).toBeHidden();
  await expect(page.getByRole('textbox', { name: 'SMS message' })).toBeVisible();
  await expect(timeline(page)).toContainText('Hi from my phone');
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  expect(overflow).toBeLessThanOrEqual(0);
  await page.screenshot({ path: test.info().outputPath('phone-conversation.png') });
  await page.getByRole('button', { name: 'Back to conversations' }).click();
  await expect(conversation(page, 'Ana Lopez')).toBeVisible();
});

test('10,000 conversations: the list stays virtualized while it scrolls', async ({ page, tenant }) => {
  test.slow();
  const sql = database();
  await sql`
    with c as (
      insert into clients (business_id, name, phone_number, client_type)
      select ${tenant.businessId}, 'Client ' || g, '+1444' || lpad(g::text, 7, '0'), 'returning' from generate_series(1, 10000) g
      returning id)
    insert into conversations (business_id, client_id, last_message_content, last_channel, last_activity_at)
    select ${tenant.businessId}, id, 'Looking forward to it', 'sms', now() - (id || ' seconds')::interval from c`;
  await sql.end();
  await page.goto(tenant.loginUrl);
  await expect(page.getByTestId('conversation-total')).toHaveText('10000 conversations');

  const figures = await page.evaluate(async () => {
    const scroller = document.querySelector('[data-testid=conversation-scroller]') as HTMLElement;
    const rows = () => document.querySelectorAll('[role=option]').length;
    const frame = () => new Promise<number>((r) => requestAnimationFrame(r));
    // Load 2,000 rows by scrolling to the end, as a reader would.
    for (let i = 0; i < 400 && scroller.scrollHeight < 2000 * 64; i++) {
      scroller.scrollTop = scroller.scrollHeight;
      await new Promise((r) => setTimeout(r, 25));
    }
    const end = Math.min(2000 * 64, scroller.scrollHeight) - scroller.clientHeight - 10;
    scroller.scrollTop = 0;
    await frame();
    // Then scroll through them at 1,600 px a frame and time every frame.
    const intervals: number[] = [];
    let maxRows = 0;
    let last = await frame();
    while (scroller.scrollTop < end && intervals.length < 1000) {
      scroller.scrollTop += 1600;
      const now = await frame();
      intervals.push(now - last);
      last = now;
      maxRows = Math.max(maxRows, rows());
    }
    intervals.sort((a, b) => a - b);
    return {
      frames: intervals.length,
      medianMs: intervals[Math.floor(intervals.length / 2)]!,
      p95Ms: intervals[Math.floor(intervals.length * 0.95)]!,
      over50Ms: intervals.filter((ms) => ms > 50).length,
      maxRows,
    };
  });
  test.info().annotations.push({ type: 'scroll 2,000 of 10,000 rows', description: JSON.stringify(figures) });
  console.log(`list scroll: ${JSON.stringify(figures)}`);
  expect(figures.frames).toBeGreaterThan(50);
  expect(figures.maxRows).toBeLessThan(60); // only the rows on screen (+ overscan) are in the DOM
});
