import { expect, test } from './fixtures';
import { addClient, equipBusiness, inboundSms } from './support';
import { startFakeTwilio, type FakeTwilio } from '../../server/testing/fake-twilio';

/**
 * An inbound MMS (docs/api.md#mms): the picture arrives as a Twilio MediaUrl through the signed
 * webhook, the timeline offers it behind a button, and only the click makes the server fetch it
 * (from the fake Twilio the e2e server is pointed at, with the account's credentials).
 */

// A 2×2 red PNG.
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEElEQVR4nGP4z8AARAwQCgAf7gP9i18U1AAAAABJRU5ErkJggg==',
  'base64',
);

let fake: FakeTwilio;
test.beforeAll(async () => {
  fake = await startFakeTwilio({
    port: Number(process.env.E2E_TWILIO_PORT),
    // The account the e2e server is configured with (playwright.config.ts).
    accountSid: 'AC' + '0'.repeat(32),
    authToken: process.env.TWILIO_AUTH_TOKEN!,
  });
});
test.afterAll(async () => {
  await fake?.close();
});

test('an inbound picture is fetched only when staff click Show picture', async ({ page, tenant, request }) => {
  const business = await equipBusiness(tenant.businessId);
  const ana = await addClient(tenant.businessId, 'Ana Lopez');
  const mediaUrl = fake.addMedia(PNG, 'image/png');
  // Twilio's media URL names the message it came with: the proxy serves a message's own media only.
  const messageSid = /\/Messages\/([^/]+)\/Media\//.exec(mediaUrl)![1]!;
  await inboundSms(request, ana.phone, business.smsNumber, 'Is this the color you meant?', {
    MessageSid: messageSid,
    NumMedia: '1',
    MediaUrl0: mediaUrl,
    MediaContentType0: 'image/png',
  });

  const mediaRequests: string[] = [];
  page.on('request', (req) => {
    if (req.url().includes('/media/')) mediaRequests.push(req.url());
  });
  await page.goto(tenant.loginUrl);
  await page.getByRole('option', { name: /^Ana Lopez/ }).click();
  const timeline = page.getByRole('log', { name: 'Messages' });
  await expect(timeline.getByText('Is this the color you meant?')).toBeVisible();
  const show = timeline.getByRole('button', { name: 'Show picture' });
  await expect(show).toBeVisible();
  await expect(timeline.getByRole('img')).toHaveCount(0);
  // Nothing fetched yet: neither the browser nor the server asked for the picture.
  expect(mediaRequests).toEqual([]);
  expect(fake.mediaRequests).toEqual([]);

  await show.click();
  const picture = timeline.getByRole('img', { name: 'Picture sent by the client' });
  await expect(picture).toBeVisible();
  await expect.poll(() => picture.evaluate((img: HTMLImageElement) => img.naturalWidth)).toBe(2);
  expect(mediaRequests).toHaveLength(1);
  expect(fake.mediaRequests[0]).toMatchObject({ authenticated: true });
});
