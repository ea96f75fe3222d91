import { randomBytes, randomUUID } from 'node:crypto';
import { getTableColumns, sql } from 'drizzle-orm';
import { db, type Tx } from '@/server/db/client';
import { businesses, businessSmsNumbers, clients, conversations, locations, messages, staff } from '@/db/schema';
import { createBusinessApiKey, issueSession } from '@/server/services/auth';
import { clientOptedOutColumns, optOut } from '@/server/services/messages/suppression';
import { COUNTS_AS_UNREAD } from '@/server/services/messages/insert';

/** Test data builders: each makes a valid row with sensible defaults; pass only what a test cares about. */
let counter = 0;
const next = () => ++counter + Math.floor(Math.random() * 1e6) * 1000;

/**
 * A business whose sending window is the whole day: a test about anything but quiet hours must not
 * depend on the hour it runs at (docs/api.md#quiet-hours). Quiet hours tests set their window.
 */
export async function createBusiness(overrides: Partial<typeof businesses.$inferInsert> = {}, tx: Tx = db) {
  const n = next();
  const [row] = await tx
    .insert(businesses)
    .values({
      name: `Studio ${n}`,
      timezone: 'America/New_York',
      fromEmail: `hello${n}@studio.test`,
      sendingWindowStart: 0,
      sendingWindowEnd: 24 * 60,
      ...overrides,
    })
    .returning();
  return row!;
}

export async function createSmsNumber(businessId: number, phoneNumber?: string, tx: Tx = db) {
  const number = phoneNumber ?? `+1415${String(next()).slice(-7).padStart(7, '0')}`;
  const [row] = await tx.insert(businessSmsNumbers).values({ businessId, phoneNumber: number, isDefault: true }).returning();
  return row!;
}

export async function createLocation(businessId: number, overrides: Partial<typeof locations.$inferInsert> = {}, tx: Tx = db) {
  const n = next();
  const [row] = await tx
    .insert(locations)
    .values({ businessId, name: `Location ${n}`, externalId: `loc-${n}`, ...overrides })
    .returning();
  return row!;
}

export async function createStaff(businessId: number, overrides: Partial<typeof staff.$inferInsert> = {}, tx: Tx = db) {
  const n = next();
  const [row] = await tx
    .insert(staff)
    .values({ businessId, name: `Staff ${n}`, email: `staff${n}@studio.test`, externalId: `staff-${n}`, ...overrides })
    .returning();
  return row!;
}

/**
 * A client; `optedOutSms` / `optedOutEmail` opt its phone number / email out (opt_outs, by address,
 * as a STOP or an unsubscribe would).
 */
export async function createClient(
  businessId: number,
  overrides: Partial<typeof clients.$inferInsert> & { optedOutSms?: boolean; optedOutEmail?: boolean } = {},
  tx: Tx = db,
) {
  const n = next();
  const { optedOutSms, optedOutEmail, ...columns } = overrides;
  const [row] = await tx
    .insert(clients)
    .values({
      businessId,
      name: `Client ${n}`,
      email: `client${n}@example.test`,
      phoneNumber: `+1212${String(n).slice(-7).padStart(7, '0')}`,
      externalId: `client-${n}`,
      clientType: 'returning',
      ...columns,
    })
    .returning();
  if (optedOutSms && row!.phoneNumber)
    await optOut({ businessId, channel: 'sms', address: row!.phoneNumber, source: 'staff' }, tx);
  if (optedOutEmail && row!.email) await optOut({ businessId, channel: 'email', address: row!.email, source: 'staff' }, tx);
  return row!;
}

/** A client's opt-out state as the API shows it (derived from opt_outs by its phone number and email). */
export async function clientOptOuts(clientId: number, tx: Tx = db): Promise<{ sms: boolean; email: boolean }> {
  const [row] = await tx.execute<{ opted_out_sms: boolean; opted_out_email: boolean }>(
    sql`select ${clientOptedOutColumns('cl')} from clients cl where cl.id = ${clientId}`,
  );
  return { sms: row!.opted_out_sms, email: row!.opted_out_email };
}

export async function createConversation(
  businessId: number,
  clientId: number,
  overrides: Partial<typeof conversations.$inferInsert> = {},
  tx: Tx = db,
) {
  const [row] = await tx
    .insert(conversations)
    .values({ businessId, clientId, ...overrides })
    .returning();
  return row!;
}

export async function createMessage(
  conversation: { id: number; businessId: number; clientId: number },
  overrides: Partial<typeof messages.$inferInsert> = {},
  tx: Tx = db,
) {
  const [row] = await tx
    .insert(messages)
    .values({
      businessId: conversation.businessId,
      conversationId: conversation.id,
      clientId: conversation.clientId,
      channel: 'sms',
      direction: 'outbound',
      messageType: 'TEXT',
      senderType: 'staff',
      content: `Message ${next()}`,
      status: 'sent',
      provider: 'sandbox',
      providerMessageId: `SM${randomBytes(16).toString('hex')}`,
      ...overrides,
      // As the product's writers set it: an inbound message came by webhook, an outbound one was sent.
      origin: overrides.origin ?? (overrides.direction === 'inbound' ? 'webhook' : 'send'),
    })
    // With what touchConversations needs to know of it, as insertMessages returns it.
    .returning({ ...getTableColumns(messages), unread: sql<boolean>`${COUNTS_AS_UNREAD}` });
  return row!;
}

export const PLATFORM_KEY = () => process.env.PLATFORM_API_KEY!;

/** A business with one owner, a business API key and a session token for the owner. */
export async function createTenant(tx: Tx = db) {
  const business = await createBusiness({}, tx);
  const owner = await createStaff(business.id, { role: 'owner' }, tx);
  const apiKey = await createBusinessApiKey(business.id, tx);
  const session = await issueSession({ kind: 'platform', scope: 'test' }, { business_id: business.id, staff_id: owner.id }, tx);
  return { business, owner, apiKey, sessionToken: session.token };
}

/** A tenant, a client and an email we sent them, stored with its Message-ID: a thread the client can reply to. */
export async function createEmailThread(
  overrides: { client?: Partial<typeof clients.$inferInsert>; sent?: Partial<typeof messages.$inferInsert> } = {},
) {
  const t = await createTenant();
  const client = await createClient(t.business.id, {
    email: `pat.${randomUUID().slice(0, 8)}@example.test`,
    ...overrides.client,
  });
  const conv = await createConversation(t.business.id, client.id);
  const ourMessageId = `<${randomUUID()}@studio.test>`;
  const sent = await createMessage(conv, {
    channel: 'email',
    messageType: 'EMAIL',
    subject: 'Your appointment',
    fromAddress: t.business.fromEmail,
    toAddress: client.email,
    provider: 'smtp',
    providerMessageId: ourMessageId,
    emailMessageId: ourMessageId,
    status: 'delivered',
    ...overrides.sent,
  });
  return { t, client, conv, sent, ourMessageId };
}
