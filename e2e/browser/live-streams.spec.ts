import type http from 'node:http';
import type { Page } from '@playwright/test';
import { requestEventStream, sseParser } from '../../server/testing/sse';
import { expect, test } from './fixtures';
import { clientTexted, inboundSms } from './support';

/**
 * A session holds at most EVENT_STREAMS_PER_SESSION (5) live event streams: one more ends its
 * oldest, which the inbox does not reopen by itself (docs/api.md#live-events). The inbox's stream is
 * the oldest here; five more streams of the same session, opened from the test as other tabs would
 * open them, take its place.
 */

type Tab = { req: http.ClientRequest; connected: boolean; errors: string[] };

/** Another "tab" of the session: an events stream opened from the test, connected when this resolves. */
function openTab(cookie: string): Promise<Tab> {
  return new Promise((resolve, reject) => {
    const tab: Tab = { req: undefined as unknown as http.ClientRequest, connected: false, errors: [] };
    tab.req = requestEventStream(new URL('/api/trpc/inbox.events', process.env.PUBLIC_BASE_URL), cookie, {}, (res) => {
      res.setEncoding('utf8');
      res.on(
        'data',
        sseParser((event, data) => {
          if (event === 'connected') {
            tab.connected = true;
            resolve(tab);
          } else if (event === 'serialized-error') {
            tab.errors.push((JSON.parse(data) as { json: { data: { code: string } } }).json.data.code);
          }
        }),
      );
      res.on('error', () => {});
    });
    tab.req.on('error', reject);
    tab.req.end();
  });
}

/** How many times the page's live stream has connected (its EventSources' `connected` events). */
const pageConnections = (page: Page) => page.evaluate(() => (window as unknown as { __connected: number }).__connected);

test('a sixth tab takes the live stream: the inbox says "Opened in another tab" and reconnects only when asked', async ({
  page,
  tenant,
  request,
}) => {
  await page.addInitScript(() => {
    const Original = window.EventSource;
    const w = window as unknown as { __connected: number };
    w.__connected = 0;
    window.EventSource = class extends Original {
      constructor(url: string | URL, init?: EventSourceInit) {
        super(url, init);
        this.addEventListener('connected', () => w.__connected++);
      }
    };
  });
  const { business, client: ana } = await clientTexted(request, tenant.businessId, 'Ana Lopez', 'Is Friday still on?');
  await page.goto(tenant.loginUrl);
  await page.getByRole('option', { name: /^Ana Lopez/ }).click();
  const timeline = page.getByRole('log', { name: 'Messages' });
  await expect(timeline).toContainText('Is Friday still on?');
  await expect.poll(() => pageConnections(page)).toBe(1);

  const cookie = (await page.context().cookies()).find((c) => c.name === 'session')!.value;
  const tabs: Tab[] = [];
  try {
    for (let i = 0; i < 5; i++) tabs.push(await openTab(cookie));
    const banner = page.getByRole('alert').filter({ hasText: 'Opened in another tab' });
    await expect(banner).toHaveText('Opened in another tab — Reconnect');

    // Not retried on its own (the client's first retry would come after 1 s): the other tabs keep theirs.
    await page.waitForTimeout(3_000);
    expect(await pageConnections(page)).toBe(1);
    expect(tabs.map((t) => t.errors)).toEqual([[], [], [], [], []]);
    // The rest of the inbox still works meanwhile.
    await expect(page.getByRole('textbox', { name: 'SMS message' })).toBeEnabled();

    await banner.getByRole('button', { name: 'Reconnect' }).click();
    await expect(banner).toHaveCount(0);
    await expect.poll(() => pageConnections(page)).toBe(2);
    // Reconnecting took the stream of the session's oldest other tab, and only that one.
    await expect.poll(() => tabs.map((t) => t.errors.length)).toEqual([1, 0, 0, 0, 0]);
    expect(tabs[0]!.errors).toEqual(['CONFLICT']);

    // Live again: a new message shows without a reload.
    await inboundSms(request, ana.phone, business.smsNumber, 'See you then');
    await expect(timeline).toContainText('See you then');
  } finally {
    for (const tab of tabs) tab.req.destroy();
  }
});
