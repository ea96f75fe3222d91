import { createHash } from 'node:crypto';
import { expect, test } from './fixtures';
import { clientTexted, database } from './support';
import { parseEnv } from '../../server/env';
import { MEDIA_URL_TTL_SECONDS } from '../../server/shared/limits';
import { signedMediaUrl } from '../../server/services/messages/media-links';

/**
 * Pictures by text from the composer (docs/api.md#mms-uploads): attached with the button and by
 * pasting, previewed and removable, uploaded with the session, sent with the text, and shown in
 * the timeline from our own route at once (no Show picture: they are ours). The send worker hands
 * Twilio each one as a signed URL of the public route (the e2e server sends through the sandbox
 * provider, so the worker's URL itself is checked against the fake Twilio in workers/send.test.ts);
 * here the production server serves such a URL, and refuses it tampered or expired.
 */

// A 2×2 red PNG and a 1×1 GIF.
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEElEQVR4nGP4z8AARAwQCgAf7gP9i18U1AAAAABJRU5ErkJggg==',
  'base64',
);
const GIF = Buffer.from('R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==', 'base64');
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

test('attach pictures in the composer, send them with the text, see them in the timeline; Twilio’s signed URL serves them', async ({
  page,
  tenant,
  request,
}) => {
  await clientTexted(request, tenant.businessId, 'Ana Lopez', 'Can I see the color before I come in?');

  await page.goto(tenant.loginUrl);
  await page.getByRole('option', { name: /^Ana Lopez/ }).click();
  const composer = page.getByRole('textbox', { name: 'SMS message' });
  await composer.fill('Here is the color and the swatch.');

  // The button's file picker: two pictures and a file that cannot go by MMS.
  await page.getByLabel('Attach pictures').setInputFiles([
    { name: 'color.png', mimeType: 'image/png', buffer: PNG },
    { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('not a picture') },
    { name: 'old.gif', mimeType: 'image/gif', buffer: GIF },
  ]);
  const previews = page.getByRole('list', { name: 'Attached pictures' });
  await expect(previews.getByRole('alert')).toHaveText('notes.txt is not a JPEG, PNG or GIF picture.');
  await expect(previews.getByRole('img', { name: 'Preview of color.png' })).toBeVisible();
  await previews.getByRole('button', { name: 'Remove old.gif' }).click();
  await expect(previews.getByRole('img', { name: 'Preview of old.gif' })).toHaveCount(0);

  // A pasted picture is attached too; the text stays as typed.
  await composer.evaluate((el, base64) => {
    const data = new DataTransfer();
    data.items.add(new File([Uint8Array.from(atob(base64), (c) => c.charCodeAt(0))], 'swatch.gif', { type: 'image/gif' }));
    el.dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));
  }, GIF.toString('base64'));
  await expect(previews.getByRole('img', { name: 'Preview of swatch.gif' })).toBeVisible();
  await expect(composer).toHaveValue('Here is the color and the swatch.');
  await expect(previews.getByText('Uploading…')).toHaveCount(0);

  await page.getByRole('button', { name: 'Send', exact: true }).click();
  await expect(composer).toHaveValue('');
  await expect(page.getByRole('list', { name: 'Attached pictures' })).toHaveCount(0);

  // In the timeline at once, from our own route: no Show picture button for our uploads.
  const sent = page.locator('[data-message-type=TEXT]').filter({ hasText: 'Here is the color and the swatch.' });
  const first = sent.getByRole('img', { name: 'Picture 1 sent with this text' });
  await expect(first).toBeVisible();
  await expect.poll(() => first.evaluate((img: HTMLImageElement) => img.naturalWidth)).toBe(2);
  await expect
    .poll(() =>
      sent.getByRole('img', { name: 'Picture 2 sent with this text' }).evaluate((img: HTMLImageElement) => img.naturalWidth),
    )
    .toBe(1);
  await expect(sent.getByRole('button', { name: /Show picture/ })).toHaveCount(0);

  // Stored: the uploads (by the staff member, the exact bytes) and the message naming them, sent.
  const sql = database();
  try {
    const uploads = await sql<{ id: number; sha256: string; filename: string; uploaded_by: string; staff_id: number }[]>`
      select id, sha256, filename, uploaded_by, staff_id from media_uploads where business_id = ${tenant.businessId} order by filename`;
    expect(uploads.map((u) => [u.filename, u.sha256, u.uploaded_by, u.staff_id])).toEqual([
      ['color.png', sha256(PNG), 'staff', tenant.staffId],
      ['old.gif', sha256(GIF), 'staff', tenant.staffId],
      ['swatch.gif', sha256(GIF), 'staff', tenant.staffId],
    ]);
    // Uploaded side by side: their ids are in no particular order.
    const [color, , swatch] = uploads;
    await expect
      .poll(async () => {
        const [m] = await sql<{ status: string; attachments: { media_id?: number }[] }[]>`
          select status, attachments from messages where business_id = ${tenant.businessId} and content = 'Here is the color and the swatch.'`;
        return m && { status: ['sent', 'delivered'].includes(m.status), media: m.attachments.map((a) => a.media_id) };
      })
      .toEqual({ status: true, media: [color!.id, swatch!.id] });

    // What the worker gives Twilio for it: PUBLIC_BASE_URL + the public route, signed (the server's own secret).
    const config = parseEnv({ SESSION_SECRET: process.env.SESSION_SECRET, PUBLIC_BASE_URL: process.env.PUBLIC_BASE_URL });
    const url = signedMediaUrl(tenant.businessId, color!.id, Date.now(), config);
    expect(url.startsWith(`${process.env.PUBLIC_BASE_URL}/api/v1/public-media/`)).toBe(true);
    const served = await request.get(url);
    expect(served.status()).toBe(200);
    expect(served.headers()['content-type']).toBe('image/png');
    expect(served.headers()['x-content-type-options']).toBe('nosniff');
    expect(sha256(await served.body())).toBe(sha256(PNG));
    const tampered = url.replace(/signature=(.)/, (_, c: string) => `signature=${c === 'A' ? 'B' : 'A'}`);
    expect((await request.get(tampered)).status()).toBe(403);
    const expired = signedMediaUrl(tenant.businessId, color!.id, Date.now() - (MEDIA_URL_TTL_SECONDS + 60) * 1000, config);
    expect((await request.get(expired)).status()).toBe(410);
  } finally {
    await sql.end();
  }
});
