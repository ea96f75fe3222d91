import { expect, test } from './fixtures';

/**
 * /sandbox against the production build (sandbox providers): a staff member opens a client's
 * phone, sees the business's text with its delivery status, and replies as the client; the reply
 * travels as a Twilio-signed webhook through the real endpoint into the client's conversation.
 */

async function withDb<T>(fn: (sql: import('postgres').Sql) => Promise<T>): Promise<T> {
  const { createSql } = await import('../../db/connect');
  const sql = createSql(process.env.E2E_DATABASE_URL!, { max: 1 });
  try {
    return await fn(sql);
  } finally {
    await sql.end();
  }
}

const digits = (n: number) => Array.from({ length: n }, () => Math.floor(Math.random() * 10)).join('');

/** The tenant's business gets an SMS number and a sender address; one client with a phone and an email. */
async function seedClient(businessId: number) {
  const suffix = Math.random().toString(36).slice(2, 8);
  const name = `Ava Stone ${suffix}`;
  const phone = `+1212${digits(7)}`;
  const email = `ava.${suffix}@example.test`;
  const businessNumber = `+1415${digits(7)}`;
  const fromEmail = `front-desk.${suffix}@studio.test`;
  const clientId = await withDb(async (sql) => {
    await sql`insert into business_sms_numbers (business_id, phone_number, is_default) values (${businessId}, ${businessNumber}, true)`;
    await sql`update businesses set from_email = ${fromEmail} where id = ${businessId}`;
    const [row] = await sql<{ id: number }[]>`
      insert into clients (business_id, name, phone_number, email, client_type) values (${businessId}, ${name}, ${phone}, ${email}, 'returning') returning id`;
    return row!.id;
  });
  return { clientId, name, phone, email, businessNumber, fromEmail };
}

test('replying as a client by SMS lands the reply in the conversation through the signed webhook', async ({
  page,
  tenant,
  request,
}) => {
  const client = await seedClient(tenant.businessId);
  // A text from the business (REST, platform key): the sandbox worker plays sent → delivered.
  const sent = await request.post(`/api/v1/businesses/${tenant.businessId}/sms`, {
    headers: { 'x-api-key': process.env.PLATFORM_API_KEY! },
    data: {
      sender_type: 'staff',
      staff_id: tenant.staffId,
      messages: [{ client_id: client.clientId, message: 'Hi Ava, see you Thursday at 3?' }],
    },
  });
  expect(sent.status(), await sent.text()).toBe(200);

  await page.goto(tenant.loginUrl);
  await expect(page).toHaveURL(/\/inbox$/);
  await page.goto('/sandbox');
  await expect(page.getByRole('heading', { name: 'Sandbox' })).toBeVisible();
  await page.getByRole('searchbox', { name: 'Search clients' }).fill(client.name);
  await page.getByRole('button', { name: new RegExp(client.name) }).click();
  await expect(page.getByTestId('sandbox-client-name')).toHaveText(client.name);

  const thread = page.getByRole('list', { name: 'SMS thread' });
  const ours = thread.locator('[data-direction="outbound"]');
  await expect(ours.getByText('Hi Ava, see you Thursday at 3?')).toBeVisible();
  await expect(ours.getByTestId('sms-status')).toHaveText('Delivered', { timeout: 20_000 });
  await expect(page.getByText(client.businessNumber)).toBeVisible();

  const box = page.getByRole('textbox', { name: 'Reply as client' });
  await expect(box).toHaveAttribute('placeholder', `Reply as ${client.name}`);
  await box.fill('Yes! See you then.');
  await page.getByRole('button', { name: 'Send SMS reply' }).click();
  const mine = thread.locator('[data-direction="inbound"]');
  await expect(mine.getByText('Yes! See you then.')).toBeVisible();
  await expect(box).toHaveValue('');
  // The client's text sits on the right, below the business's, as on a phone.
  const [theirsBox, mineBox] = [await ours.first().boundingBox(), await mine.first().boundingBox()];
  expect(mineBox!.x).toBeGreaterThan(theirsBox!.x);
  expect(mineBox!.y).toBeGreaterThan(theirsBox!.y);

  // Stored as the provider's webhook would store it: an inbound SMS in the client's conversation.
  const rows = await withDb(
    (sql) => sql<{ content: string; status: string; from_address: string; to_address: string; provider: string }[]>`
      select content, status, from_address, to_address, provider from messages
      where business_id = ${tenant.businessId} and client_id = ${client.clientId} and direction = 'inbound'`,
  );
  expect(rows).toEqual([
    {
      content: 'Yes! See you then.',
      status: 'received',
      from_address: client.phone,
      to_address: client.businessNumber,
      provider: 'twilio',
    },
  ]);
  await page.screenshot({ path: test.info().outputPath('sandbox-phone.png') });
});

test('replying as a client by email threads to the business’s last email', async ({ page, tenant, request }) => {
  const client = await seedClient(tenant.businessId);
  const sent = await request.post(`/api/v1/businesses/${tenant.businessId}/email`, {
    headers: { 'x-api-key': process.env.PLATFORM_API_KEY! },
    data: {
      sender_type: 'staff',
      staff_id: tenant.staffId,
      messages: [{ client_id: client.clientId, subject: 'Your appointment', message: 'See you Thursday at 3.' }],
    },
  });
  expect(sent.status(), await sent.text()).toBe(200);

  await page.goto(tenant.loginUrl);
  await expect(page).toHaveURL(/\/inbox$/);
  await page.goto('/sandbox');
  await page.getByRole('button', { name: new RegExp(client.name) }).click();
  await page.getByRole('tab', { name: 'Mailbox' }).click();
  const emails = page.getByRole('list', { name: 'Emails' });
  const ours = emails.getByRole('button', { name: /Your appointment/ });
  await expect(ours).toContainText(/Sent|Delivered/, { timeout: 20_000 });
  await ours.click();
  await expect(page.getByRole('article', { name: 'Open email' })).toContainText('See you Thursday at 3.');
  const form = page.getByRole('form', { name: 'Email reply' });
  await expect(form).toContainText(client.fromEmail);
  await expect(page.getByRole('textbox', { name: 'Subject' })).toHaveAttribute('placeholder', 'Re: Your appointment');

  await page.getByRole('textbox', { name: 'Email body' }).fill('Is there parking near the studio?');
  await page.getByRole('button', { name: 'Send email reply' }).click();
  const reply = emails.getByRole('button', { name: /Re: Your appointment/ });
  await expect(reply).toBeVisible();
  await expect(page.getByRole('textbox', { name: 'Email body' })).toHaveValue('');
  await reply.click();
  await expect(page.getByRole('article', { name: 'Open email' })).toContainText('Is there parking near the studio?');

  // Threaded by In-Reply-To into the client's conversation.
  const rows = await withDb(
    (sql) => sql<
      {
        direction: string;
        subject: string;
        email_message_id: string | null;
        in_reply_to: string | null;
        conversation_id: number;
      }[]
    >`
      select direction, subject, email_message_id, in_reply_to, conversation_id from messages
      where business_id = ${tenant.businessId} and client_id = ${client.clientId} and channel = 'email' order by id`,
  );
  expect(rows).toHaveLength(2);
  expect(rows[1]).toMatchObject({
    direction: 'inbound',
    subject: 'Re: Your appointment',
    in_reply_to: rows[0]!.email_message_id,
    conversation_id: rows[0]!.conversation_id,
  });
  await page.screenshot({ path: test.info().outputPath('sandbox-mailbox.png') });
});

test('the sandbox without a session sends the visitor to sign in', async ({ page }) => {
  await page.goto('/sandbox');
  await expect(page).toHaveURL(/\/login$/);
});
