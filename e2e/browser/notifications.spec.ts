import type { Page } from '@playwright/test';
import { expect, test } from './fixtures';
import { keepScreenshot } from './page-checks';
import { addClient, addStaff, database, equipBusiness, inboundSms, staffLoginUrl } from './support';

/**
 * Notifications in the inbox (docs/api.md#notifications), two staff in browser contexts of their
 * own: the bell's count and the tab title follow a mention live; opening the notification opens the
 * conversation and reads it; a hidden tab gets one desktop notification per conversation (Playwright
 * pages always report themselves visible, so the page's visibility is faked and `Notification` is a
 * spy); permission is asked only from the bell's button; a choice on the settings page stays.
 */

// Two browser contexts and the worker's handler between them.
test.describe.configure({ timeout: 60_000 });

const bell = (page: Page) => page.getByRole('button', { name: /^Notifications,/ });
const panel = (page: Page) => page.getByRole('region', { name: 'Notifications' });
const row = (page: Page, name: string) => page.getByRole('option', { name: new RegExp(`^${name}`) });
const heading = (page: Page) => page.getByRole('main').getByRole('heading', { level: 2 });

type Spied = { title: string; options: { body?: string; tag?: string; renotify?: boolean }; closed: boolean };

/**
 * Before the page's scripts: the page says it is hidden, and `Notification` records what is made
 * of it (`permission`: what the browser would answer until asked) and how often permission is asked.
 */
function fakeBrowser(page: Page, { permission, hidden }: { permission: NotificationPermission; hidden: boolean }) {
  return page.addInitScript(
    ({ permission, hidden }) => {
      const w = window as unknown as { __shown: unknown[]; __asked: number; __live: boolean };
      w.__shown = [];
      w.__asked = 0;
      class SpyNotification {
        static permission: NotificationPermission = permission;
        static requestPermission() {
          w.__asked++;
          SpyNotification.permission = 'granted';
          return Promise.resolve('granted' as const);
        }
        onclick: (() => void) | null = null;
        closed = false;
        constructor(
          public title: string,
          public options: NotificationOptions,
        ) {
          w.__shown.push(this);
        }
        close() {
          this.closed = true;
        }
      }
      (window as unknown as { Notification: unknown }).Notification = SpyNotification;
      if (hidden) {
        Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => 'hidden' });
        Object.defineProperty(document, 'hidden', { configurable: true, get: () => true });
      }
      // The live stream is up once its first frame arrived (a presence snapshot, sent as it subscribes).
      w.__live = false;
      const Original = window.EventSource;
      window.EventSource = class extends Original {
        constructor(url: string | URL, init?: EventSourceInit) {
          super(url, init);
          this.addEventListener('message', () => (w.__live = true));
        }
      };
    },
    { permission, hidden },
  );
}

/** A business with a number, a client, and a colleague (B) of the owner: all there before the client writes. */
async function deskWithColleague(businessId: number, clientName: string, colleagueName: string) {
  const business = await equipBusiness(businessId);
  const client = await addClient(businessId, clientName);
  return { business, client, colleague: await addStaff(businessId, colleagueName) };
}

const shown = (page: Page) =>
  page.evaluate(() =>
    ((window as unknown as { __shown: Spied[] }).__shown ?? []).map((n) => ({
      title: n.title,
      body: n.options.body,
      tag: n.options.tag,
      renotify: n.options.renotify,
      closed: n.closed,
    })),
  );

test('a mention raises B’s bell and tab title live; opening it opens the conversation and reads it', async ({
  page,
  browser,
  tenant,
  request,
}) => {
  const { business, client, colleague: sam } = await deskWithColleague(tenant.businessId, 'Rosa Díaz', 'Sam Stylist');
  await inboundSms(request, client.phone, business.smsNumber, 'Is my colour appointment still on?');

  // B (Sam) is told of the conversation nobody holds: one unread, in the bell and the title.
  const context = await browser.newContext();
  const b = await context.newPage();
  await b.goto(await staffLoginUrl(request, tenant.businessId, sam));
  await b.goto('/inbox');
  await expect(bell(b)).toHaveAccessibleName('Notifications, 1 unread');
  await expect(b).toHaveTitle('(1) Inbox');
  await bell(b).click();
  await expect(bell(b)).toHaveAttribute('aria-expanded', 'true');
  await expect(panel(b).getByRole('button', { name: /Rosa Díaz is waiting \(unassigned\)/ })).toContainText(
    'Is my colour appointment still on?',
  );
  // Mark all read: the count and the title's prefix go; the item stays, read.
  await panel(b).getByRole('button', { name: 'Mark all read' }).click();
  await expect(bell(b)).toHaveAccessibleName('Notifications, none unread');
  await expect(b).toHaveTitle('Inbox');
  await expect(panel(b).getByRole('button', { name: /^Unread:/ })).toHaveCount(0);
  // Escape closes the panel, the focus back on the bell.
  await b.keyboard.press('Escape');
  await expect(panel(b)).toBeHidden();
  await expect(bell(b)).toBeFocused();

  // A (Maya) mentions Sam in a note.
  await page.goto(tenant.loginUrl);
  await row(page, 'Rosa Díaz').click();
  await page.getByRole('tab', { name: 'Note' }).click();
  const box = page.getByRole('textbox', { name: 'Internal note' });
  await box.pressSequentially('Can you confirm the colour? @Sa');
  await expect(page.getByRole('listbox', { name: 'Mention a colleague' }).getByRole('option')).toHaveText(['Sam Stylist']);
  await box.press('Enter');
  await box.pressSequentially('thanks!');
  await page.getByRole('button', { name: 'Add note' }).click();

  // B's bell and title rise without a reload.
  await expect(bell(b)).toHaveAccessibleName('Notifications, 1 unread');
  await expect(b.getByTestId('bell-count')).toHaveText('1');
  await expect(b).toHaveTitle('(1) Inbox');
  await bell(b).click();
  const mention = panel(b).getByRole('button', {
    name: new RegExp(`^Unread: ${tenant.staffName} mentioned you \\(Rosa Díaz\\)`),
  });
  await expect(mention).toContainText('@Sam Stylist thanks!');
  // Newest first: the mention above the conversation's first notification.
  await expect(panel(b).getByTestId('bell-item').first()).toContainText('mentioned you');
  await keepScreenshot(b, test.info(), 'bell panel');
  await mention.click();
  await expect(panel(b)).toBeHidden();
  await expect(heading(b)).toHaveText('Rosa Díaz');
  await expect(b.locator('[data-message-type=NOTE]')).toContainText('@Sam Stylist thanks!');
  await expect(bell(b)).toHaveAccessibleName('Notifications, none unread');
  await expect(b).toHaveTitle('Inbox');
  await context.close();
});

test('a hidden tab gets one desktop notification per conversation, replaced by the next; clicking it opens the conversation', async ({
  browser,
  tenant,
  request,
}) => {
  const { business, client, colleague: ben } = await deskWithColleague(tenant.businessId, 'Ana Lopez', 'Ben Colorist');

  const context = await browser.newContext();
  const b = await context.newPage();
  await fakeBrowser(b, { permission: 'granted', hidden: true });
  await b.goto(await staffLoginUrl(request, tenant.businessId, ben));
  await b.goto('/inbox');
  await expect(b.getByText('No conversations here.')).toBeVisible();
  await b.waitForFunction(() => (window as unknown as { __live: boolean }).__live);

  // The client's text, in a conversation nobody holds: one notification, tagged with the conversation.
  await inboundSms(request, client.phone, business.smsNumber, 'Can I come at 4 instead?');
  await expect(row(b, 'Ana Lopez')).toBeVisible();
  const sql = database();
  const [conversation] = await sql<{ id: number }[]>`select id from conversations where business_id = ${tenant.businessId}`;
  await sql.end();
  const tag = `conversation-${conversation!.id}`;
  await expect.poll(() => shown(b)).toHaveLength(1);
  expect(await shown(b)).toEqual([
    { title: 'Ana Lopez is waiting (unassigned)', body: 'Can I come at 4 instead?', tag, renotify: true, closed: false },
  ]);

  // A second text: a new notification under the same tag (the browser replaces the first with it).
  await inboundSms(request, client.phone, business.smsNumber, 'Or 5, whichever suits');
  await expect.poll(() => shown(b)).toHaveLength(2);
  const [, second] = await shown(b);
  expect(second).toMatchObject({ title: 'Ana Lopez is waiting (unassigned)', tag, renotify: true });
  expect(second!.body).toContain('Or 5, whichever suits');
  await expect(bell(b)).toHaveAccessibleName('Notifications, 1 unread');

  // Its click opens the conversation (and closes the notification).
  await b.evaluate(() => {
    const all = (window as unknown as { __shown: { onclick: (() => void) | null }[] }).__shown;
    all.at(-1)!.onclick!();
  });
  await expect(heading(b)).toHaveText('Ana Lopez');
  expect(new URL(b.url()).searchParams.get('c')).toBe(String(conversation!.id));
  expect((await shown(b)).at(-1)!.closed).toBe(true);
  await expect(bell(b)).toHaveAccessibleName('Notifications, none unread');
  await context.close();
});

test('permission is asked only from the bell’s button, never on load; the sound’s choice is kept', async ({ page, tenant }) => {
  await fakeBrowser(page, { permission: 'default', hidden: false });
  await page.goto(tenant.loginUrl);
  await page.goto('/inbox');
  await expect(bell(page)).toBeVisible();
  await page.waitForFunction(() => (window as unknown as { __live: boolean }).__live);
  expect(await page.evaluate(() => (window as unknown as { __asked: number }).__asked)).toBe(0);

  await bell(page).click();
  const enable = panel(page).getByRole('button', { name: 'Enable desktop notifications' });
  await expect(enable).toBeVisible();
  expect(await page.evaluate(() => (window as unknown as { __asked: number }).__asked)).toBe(0);
  await enable.click();
  await expect(panel(page).getByTestId('desktop-permission')).toContainText('Desktop notifications are on');
  await expect(enable).toHaveCount(0);
  expect(await page.evaluate(() => (window as unknown as { __asked: number }).__asked)).toBe(1);

  // The sound is off until chosen, and the choice outlives a reload.
  const sound = panel(page).getByRole('checkbox', { name: 'Play a sound' });
  await expect(sound).not.toBeChecked();
  await sound.check();
  await page.reload();
  await bell(page).click();
  await expect(panel(page).getByRole('checkbox', { name: 'Play a sound' })).toBeChecked();
});

test('the settings page: a channel turned off stays off after a reload', async ({ page, tenant }) => {
  await page.goto(tenant.loginUrl);
  await page.goto('/inbox');
  await page.getByText('Settings', { exact: true }).click();
  await page.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: 'Notifications' }).click();
  await expect(page.getByRole('heading', { level: 1, name: 'Notifications' })).toBeVisible();

  const desktop = page.getByRole('checkbox', { name: 'Client replied: Desktop' });
  await expect(desktop).toBeChecked();
  // The digest is email only: no box for the other channels.
  await expect(page.getByRole('checkbox', { name: 'Waiting digest: Email' })).toBeChecked();
  await expect(page.getByRole('checkbox', { name: /^Waiting digest: (In the inbox|Desktop)$/ })).toHaveCount(0);
  await expect(page.getByRole('row', { name: /Mentioned in a note/ })).toContainText('A colleague mentioned me in a note');

  await desktop.uncheck();
  const mine = page.getByRole('form', { name: 'My notifications' });
  await mine.getByRole('button', { name: 'Save' }).click();
  await expect(mine.getByRole('status')).toHaveText('Saved.');
  await page.reload();
  await expect(page.getByRole('checkbox', { name: 'Client replied: Desktop' })).not.toBeChecked();
  await expect(page.getByRole('checkbox', { name: 'Client replied: In the inbox' })).toBeChecked();

  const sql = database();
  const [me] = await sql<{ preferences: unknown }[]>`
    select notification_preferences as preferences from staff where id = ${tenant.staffId}`;
  await sql.end();
  expect(me!.preferences).toEqual({ client_replied: { browser: false } });
});
