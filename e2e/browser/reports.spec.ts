import type { APIRequestContext, Locator, Page } from '@playwright/test';
import { expect, test } from './fixtures';
import { expectFitsViewport, expectNoSeriousViolations } from './page-checks';
import { addClient, addStaff, database, equipBusiness, staffLoginUrl } from './support';

/**
 * The Reports page (docs/api.md#reports, issue 39): a history recorded over REST three days back
 * (the worker's `reports` handler counts it), then the page's tables against the REST report of the
 * same range, a grouping and a range changed, the CSV, the chart drawn, and a staff member without
 * the owner or manager role seeing only their own figures. Test businesses are in UTC.
 */

const headers = () => ({ 'x-api-key': process.env.PLATFORM_API_KEY! });
const DAY = 86_400_000;
const noonDaysAgo = (n: number) => new Date(Math.floor(Date.now() / DAY) * DAY - n * DAY + 12 * 3_600_000);

/** A client texts at noon `daysAgo` days back; `staffId` answers `minutes` later (both recorded). */
async function exchange(
  request: APIRequestContext,
  businessId: number,
  clientId: number,
  daysAgo: number,
  staffId: number,
  minutes: number,
) {
  const at = noonDaysAgo(daysAgo);
  for (const item of [
    { direction: 'inbound', sender_type: 'client', sent_at: at },
    { direction: 'outbound', sender_type: 'staff', staff_id: staffId, sent_at: new Date(at.getTime() + minutes * 60_000) },
  ]) {
    const { direction, sent_at, ...envelope } = item;
    const res = await request.post(`/api/v1/businesses/${businessId}/sms/record`, {
      headers: headers(),
      data: {
        ...envelope,
        sent_at: sent_at.toISOString(),
        messages: [{ client_id: clientId, message: `${direction} ${daysAgo}`, direction }],
      },
    });
    expect(res.ok(), await res.text()).toBe(true);
  }
}

async function restReport(request: APIRequestContext, businessId: number, report: string, query: string) {
  const res = await request.get(`/api/v1/businesses/${businessId}/reports/${report}?${query}`, { headers: headers() });
  expect(res.ok(), await res.text()).toBe(true);
  return res.json();
}

/** The page's range and filters, read from its Download CSV link (the same query the tables used). */
async function pageQuery(page: Page): Promise<URLSearchParams> {
  const href = await page.getByRole('link', { name: 'Download CSV' }).getAttribute('href');
  return new URL(href!, 'http://x').searchParams;
}

/** A table's rows as { group: [data-value of each cell] }. */
async function tableValues(table: Locator): Promise<Record<string, string[]>> {
  return table.evaluate((t) =>
    Object.fromEntries(
      [...t.querySelectorAll('tbody tr')].map((tr) => [
        tr.querySelector('th')!.textContent!.trim(),
        [...tr.querySelectorAll('td')].map((td) => td.getAttribute('data-value') ?? ''),
      ]),
    ),
  );
}

const section = (page: Page, name: string) => page.getByRole('region', { name });
const table = (page: Page, caption: RegExp) => page.getByRole('table', { name: caption });

test('reports: tables match REST, group by and range change, the CSV downloads, the chart draws; staff see their own', async ({
  page,
  tenant,
  request,
  browser,
}, testInfo) => {
  test.slow();
  await equipBusiness(tenant.businessId);
  const sam = await addStaff(tenant.businessId, 'Sam Stylist');
  const clients = await Promise.all(['Ana', 'Ben', 'Cara'].map((n) => addClient(tenant.businessId, `${n} Report`)));
  // Three days back the owner answered in 5 minutes, two days back Sam in 10, yesterday the owner in 20.
  await exchange(request, tenant.businessId, clients[0]!.id, 3, tenant.staffId, 5);
  await exchange(request, tenant.businessId, clients[1]!.id, 2, sam, 10);
  await exchange(request, tenant.businessId, clients[2]!.id, 1, tenant.staffId, 20);
  const wide = `from=${new Date(Date.now() - 30 * DAY).toISOString()}&to=${new Date(Date.now() + DAY).toISOString()}`;
  // The worker's reports handler counts them shortly after.
  await expect
    .poll(async () => (await restReport(request, tenant.businessId, 'response-times', wide)).total.first_response.count, {
      timeout: 30_000,
    })
    .toBe(3);

  await page.goto(tenant.loginUrl);
  await page.goto('/inbox');
  await page.getByText('Settings', { exact: true }).click();
  await page.getByRole('link', { name: 'Reports' }).click();
  await expect(page.getByRole('heading', { name: 'Reports', level: 1 })).toBeVisible();
  await expect(page.getByRole('radio', { name: 'Last 30 days' })).toBeChecked();

  // By day: the page's figures are REST's for the same range, cell by cell.
  const firsts = table(page, /^First responses/);
  await expect(firsts.locator('tbody tr')).toHaveCount(4); // three days and the total
  const q = await pageQuery(page);
  const rest = await restReport(request, tenant.businessId, 'response-times', `${q}&group_by=day`);
  const expected = Object.fromEntries([
    ...rest.groups.map((g: { key: string; first_response: Record<string, number | null> }) => [g.key, g.first_response]),
    ['Total', rest.total.first_response],
  ]);
  const shown = await tableValues(firsts);
  expect(Object.keys(shown)).toEqual(Object.keys(expected));
  for (const [key, f] of Object.entries(expected) as [string, Record<string, number | null>][])
    expect(shown[key]).toEqual([String(f.count), String(f.median_seconds), String(f.p90_seconds)]);
  expect(shown.Total).toEqual(['3', '600', '1080']); // 5, 10, 20 minutes: median 10, p90 18
  await expect(firsts.getByRole('row', { name: /Total/ })).toContainText('10 min');
  const volume = await tableValues(table(page, /^Conversations/));
  expect(volume.Total).toEqual(['3', '0']);

  // The chart draws a bar per day.
  const chart = section(page, 'Response times').getByRole('img');
  await expect(chart).toHaveAttribute('data-bars', '3');
  const bars = chart.locator('rect');
  await expect(bars).toHaveCount(3);
  for (const box of await bars.evaluateAll((rs) =>
    rs.map((r) => {
      const { width, height } = (r as SVGRectElement).getBBox();
      return { width, height };
    }),
  ))
    expect(box.width * box.height).toBeGreaterThan(0);
  await section(page, 'Response times').screenshot({ path: testInfo.outputPath('response-times-chart.png') });

  // By staff: the owner's two, Sam's one.
  await page.getByLabel('Group by').selectOption('staff');
  await expect(firsts.locator('tbody tr')).toHaveCount(3);
  const byStaff = await tableValues(firsts);
  expect(byStaff[tenant.staffName]).toEqual(['2', '750', '1110']);
  expect(byStaff['Sam Stylist']).toEqual(['1', '600', '600']);

  // The last 7 days, then dates: only two days back; then dates the wrong way round.
  await page.getByRole('radio', { name: 'Last 7 days' }).check();
  await expect(firsts.getByRole('row', { name: /Total/ }).locator('td').first()).toHaveAttribute('data-value', '3');
  await page.getByRole('radio', { name: 'Dates' }).check();
  const twoDaysAgo = noonDaysAgo(2).toISOString().slice(0, 10);
  await page.getByLabel('From', { exact: true }).fill(twoDaysAgo);
  await page.getByLabel('To', { exact: true }).fill(twoDaysAgo);
  await expect(firsts.locator('tbody tr')).toHaveCount(2);
  expect((await tableValues(firsts))['Sam Stylist']).toEqual(['1', '600', '600']);
  expect((await pageQuery(page)).get('from')).toBe(`${twoDaysAgo}T00:00:00.000Z`);
  await page.getByLabel('To', { exact: true }).fill(noonDaysAgo(3).toISOString().slice(0, 10));
  await expect(page.getByRole('alert').first()).toHaveText('The end date must be on or after the start date.');
  await page.getByRole('radio', { name: 'Last 30 days' }).check();

  // Download CSV: the REST export with the session cookie, one line per cycle.
  const csv = await page.request.get((await page.getByRole('link', { name: 'Download CSV' }).getAttribute('href'))!);
  expect(csv.status()).toBe(200);
  expect(csv.headers()['content-type']).toContain('text/csv');
  expect((await csv.text()).trim().split('\r\n')).toHaveLength(4);

  // Sam (role staff) sees only his own figures, and is told so; no staff filter.
  const context = await browser.newContext();
  const staffPage = await context.newPage();
  await staffPage.goto(await staffLoginUrl(request, tenant.businessId, sam));
  await staffPage.goto('/reports');
  await expect(staffPage.getByTestId('own-figures')).toContainText('These are your own figures');
  await expect(staffPage.getByLabel('Staff', { exact: true })).toHaveCount(0);
  const own = table(staffPage, /^First responses/);
  await expect(own.getByRole('row', { name: /Total/ }).locator('td').first()).toHaveAttribute('data-value', '1');
  expect(Object.keys(await tableValues(own))).toEqual([noonDaysAgo(2).toISOString().slice(0, 10), 'Total']);
  const ownCsv = await staffPage.request.get((await staffPage.getByRole('link', { name: 'Download CSV' }).getAttribute('href'))!);
  expect((await ownCsv.text()).trim().split('\r\n')).toHaveLength(2);
  await context.close();
});

test('reports: a location with its own time zone reads its days on its clock', async ({ page, tenant }) => {
  const sql = database();
  await sql`insert into locations (business_id, name, timezone) values (${tenant.businessId}, 'Tokyo studio', 'Asia/Tokyo')`;
  await sql.end();
  await page.goto(tenant.loginUrl);
  await page.goto('/reports');
  await expect(page.getByText('Days are read on the business’s clock (UTC).')).toBeVisible();
  await page.getByRole('combobox', { name: 'Location', exact: true }).selectOption({ label: 'Tokyo studio' });
  // Tokyo is UTC+9 all year: its days start at 15:00 UTC the day before.
  await page.getByRole('radio', { name: 'Dates' }).check();
  await page.getByLabel('From', { exact: true }).fill('2026-03-10');
  await page.getByLabel('To', { exact: true }).fill('2026-03-16');
  await expect
    .poll(async () => Object.fromEntries(await pageQuery(page)))
    .toMatchObject({
      from: '2026-03-09T15:00:00.000Z',
      to: '2026-03-16T15:00:00.000Z',
    });
  // The note names the zone the reports answered with.
  await expect(page.getByText('Days are read on Tokyo studio’s clock (Asia/Tokyo).')).toBeVisible();
  // A preset too: the last 7 days end at the next midnight in Tokyo.
  await page.getByRole('radio', { name: 'Last 7 days' }).check();
  const to = new Date((await pageQuery(page)).get('to')!);
  expect(to.getUTCHours()).toBe(15);
  expect(to.getTime() - Date.now()).toBeGreaterThan(0);
  expect(to.getTime() - Date.now()).toBeLessThanOrEqual(86_400_000);
});

test('reports on a phone: nothing past 390 px', async ({ page, tenant, request }, testInfo) => {
  await page.setViewportSize({ width: 390, height: 844 });
  await equipBusiness(tenant.businessId);
  const client = await addClient(tenant.businessId, 'Dee Phone');
  await exchange(request, tenant.businessId, client.id, 1, tenant.staffId, 7);
  await page.goto(tenant.loginUrl);
  await page.goto('/reports');
  await expect(section(page, 'Response times').getByRole('img')).toBeVisible();
  await expectFitsViewport(page, 'reports');
  await expectNoSeriousViolations(page, 'reports on a phone');
  await page.screenshot({ path: testInfo.outputPath('reports-phone.png'), fullPage: true });
});
