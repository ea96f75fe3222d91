import { randomBytes } from 'node:crypto';
import { expect, type APIRequestContext, type Page } from '@playwright/test';
import { createSql } from '../../db/connect';
import {
  inboundEmailPath,
  inboundParseForm,
  multipartBody,
  TWILIO_WEBHOOK_PATHS,
  twilioSid,
  twilioWebhookRequest,
} from '../../server/providers/webhook-requests';

/**
 * Test data for the browser tests: rows the business already has (numbers, clients) are
 * inserted directly; everything a client says arrives through the real webhooks, signed exactly
 * as Twilio and SendGrid sign them, so the inbox sees it as it would in production.
 */
export function database() {
  return createSql(process.env.E2E_DATABASE_URL!, { max: 2 });
}

const randomPhone = () => `+1555${String(Math.floor(Math.random() * 10_000_000)).padStart(7, '0')}`;

type Business = { smsNumber: string; email: string };
type SeededClient = { id: number; name: string; phone: string; email: string };

/** Gives the business an SMS number and a sender address (the `To` of inbound messages). */
export async function equipBusiness(businessId: number): Promise<Business> {
  const sql = database();
  const smsNumber = randomPhone();
  const email = `desk-${randomBytes(4).toString('hex')}@studio.test`;
  await sql`insert into business_sms_numbers (business_id, phone_number, is_default) values (${businessId}, ${smsNumber}, true)`;
  await sql`update businesses set from_email = ${email}, from_name = 'Front desk' where id = ${businessId}`;
  await sql.end();
  return { smsNumber, email };
}

export async function addClient(businessId: number, name: string): Promise<SeededClient> {
  const sql = database();
  const phone = randomPhone();
  const email = `${name.toLowerCase().replace(/\W+/g, '.')}.${randomBytes(3).toString('hex')}@client.test`;
  const [row] = await sql<{ id: number }[]>`
    insert into clients (business_id, name, phone_number, email, client_type) values (${businessId}, ${name}, ${phone}, ${email}, 'returning') returning id`;
  await sql.end();
  return { id: row!.id, name, phone, email };
}

export async function addStaff(businessId: number, name: string): Promise<number> {
  const sql = database();
  const [row] = await sql<
    { id: number }[]
  >`insert into staff (business_id, name, role) values (${businessId}, ${name}, 'staff') returning id`;
  await sql.end();
  return row!.id;
}

/** A Twilio webhook (form POST with X-Twilio-Signature) to one of our endpoints; its answer's text. */
export async function postTwilio(request: APIRequestContext, path: string, params: Record<string, string>): Promise<string> {
  const req = twilioWebhookRequest(`${process.env.PUBLIC_BASE_URL}${path}`, params, process.env.TWILIO_AUTH_TOKEN!);
  const res = await request.post(path, { headers: req.headers, data: req.body });
  if (!res.ok()) throw new Error(`${path} answered ${res.status()}: ${await res.text()}`);
  return res.text();
}

/** An inbound SMS, posted to the real webhook with Twilio's signature. */
/** `extra`: more of Twilio's fields, e.g. NumMedia, MediaUrl0 and MediaContentType0 for an MMS. */
export async function inboundSms(
  request: APIRequestContext,
  from: string,
  to: string,
  body: string,
  extra: Record<string, string> = {},
) {
  const params = {
    MessageSid: twilioSid('SM'),
    AccountSid: twilioSid('AC'),
    From: from,
    To: to,
    Body: body,
    NumMedia: '0',
    NumSegments: '1',
    ...extra,
  };
  await postTwilio(request, TWILIO_WEBHOOK_PATHS.smsIncoming, params);
}

/**
 * Where most inbox tests start: the business equipped (equipBusiness), a client of it, and a text
 * from that client, so the conversation is in the inbox.
 */
export async function clientTexted(
  request: APIRequestContext,
  businessId: number,
  name: string,
  text: string,
): Promise<{ business: Business; client: SeededClient }> {
  const business = await equipBusiness(businessId);
  const client = await addClient(businessId, name);
  await inboundSms(request, client.phone, business.smsNumber, text);
  return { business, client };
}

/** An inbound email, posted like SendGrid Inbound Parse (multipart) to the real endpoint. */
export async function inboundEmail(
  request: APIRequestContext,
  mail: { from: string; to: string; subject: string; text: string; html?: string; attachmentName?: string },
) {
  const form = inboundParseForm({
    from: mail.from,
    to: mail.to,
    subject: mail.subject,
    text: mail.text,
    html: mail.html ?? null,
    messageId: `<${randomBytes(8).toString('hex')}@client.test>`,
    envelope: { from: mail.from, to: [mail.to] },
    attachments: mail.attachmentName
      ? [{ filename: mail.attachmentName, contentType: 'text/plain', content: Buffer.from('hello') }]
      : [],
  });
  const body = await multipartBody(form.fields, form.files);
  const res = await request.post(`${inboundEmailPath()}?secret=${encodeURIComponent(process.env.EMAIL_INBOUND_SECRET!)}`, {
    headers: { 'content-type': body.contentType },
    data: body.bytes,
  });
  if (!res.ok()) throw new Error(`inbound email answered ${res.status()}: ${await res.text()}`);
}

/** A one-time login link for a staff member (a second browser context signs in as a colleague with it). */
export async function staffLoginUrl(request: APIRequestContext, businessId: number, staffId: number): Promise<string> {
  const res = await request.post('/api/v1/auth/token', {
    headers: { 'x-api-key': process.env.PLATFORM_API_KEY! },
    data: { business_id: businessId, staff_id: staffId },
  });
  if (!res.ok()) throw new Error(`auth/token answered ${res.status()}: ${await res.text()}`);
  return ((await res.json()) as { login_url: string }).login_url;
}

/** The client panel's Appointments card (docs/api.md#appointments). */
export const appointmentsCard = (page: Page) =>
  page.getByRole('complementary', { name: 'Client details' }).getByRole('region', { name: 'Appointments' });

export type AppointmentAnswer = {
  appointment_id: number;
  external_id: string;
  status: string;
  reminders: { message_id: number; asks_confirmation: boolean; status: string }[];
};

/** The platform's PUT of a new appointment three days ahead (the default reminder rules write two reminders). */
export async function putAppointment(
  request: APIRequestContext,
  businessId: number,
  body: Record<string, unknown>,
): Promise<AppointmentAnswer> {
  const startsAt = Date.now() + 3 * 86_400_000;
  const res = await request.put(
    `/api/v1/businesses/${businessId}/appointments/booking-${startsAt}-${randomBytes(3).toString('hex')}`,
    {
      headers: { 'x-api-key': process.env.PLATFORM_API_KEY! },
      data: {
        starts_at: new Date(startsAt).toISOString(),
        ends_at: new Date(startsAt + 3_600_000).toISOString(),
        service: 'Haircut',
        ...body,
      },
    },
  );
  expect(res.status()).toBe(201);
  return (await res.json()) as AppointmentAnswer;
}

/** The platform's GET of an appointment, with its reminders. */
export async function getAppointment(
  request: APIRequestContext,
  businessId: number,
  externalId: string,
): Promise<AppointmentAnswer> {
  const res = await request.get(`/api/v1/businesses/${businessId}/appointments/${encodeURIComponent(externalId)}`, {
    headers: { 'x-api-key': process.env.PLATFORM_API_KEY! },
  });
  expect(res.status()).toBe(200);
  return (await res.json()) as AppointmentAnswer;
}
