import { beforeAll, describe, expect, it } from 'vitest';
import { createClient, createSmsNumber } from '@/server/testing/factories';
import { getJson, postJson, restTenant, type RestTenant } from '@/server/testing/http';
import { conversationDetails, listConversations, PREVIEW_LENGTH } from './index';

/**
 * The conversation list's preview (docs/api.md#previews), through the REST list and the service the
 * inbox reads: a note is a note (never under a channel), a scheduled text says it waits, an unread
 * conversation shows the client's unread message before a later one of ours, and each business sees
 * only its own messages.
 */

let t: RestTenant;
let other: RestTenant;
beforeAll(async () => {
  [t, other] = await Promise.all([restTenant(), restTenant()]);
  await Promise.all([createSmsNumber(t.business.id), createSmsNumber(other.business.id)]);
});

let n = 0;
const phone = () => `+1415${String(4_200_000 + n++)}`;

async function newClient(tenant: RestTenant = t) {
  return createClient(tenant.business.id, { phoneNumber: phone() });
}

async function record(tenant: RestTenant, clientId: number, message: string, direction: 'inbound' | 'outbound') {
  const res = await postJson(`${tenant.base}/sms/record`, tenant.key, {
    sender_type: direction === 'inbound' ? 'client' : 'staff',
    messages: [{ client_id: clientId, message, direction }],
  });
  expect(res.status).toBe(200);
  return res.body.message_ids[0] as number;
}

async function conversationOf(tenant: RestTenant, clientId: number): Promise<number> {
  const res = await getJson(`${tenant.base}/clients/${clientId}`, tenant.key);
  return res.body.conversation_id as number;
}

/** The conversation's row in the REST list (the JSON PostgreSQL builds) and in the inbox's service. */
async function previews(tenant: RestTenant, conversationId: number) {
  const rest = await getJson(`${tenant.base}/conversations?page_size=100`, tenant.key);
  const row = (rest.body.conversations as { conversation_id: number; preview: unknown }[]).find(
    (c) => c.conversation_id === conversationId,
  );
  const listed = await listConversations(tenant.business.id, { assignment: 'all', page: 1, page_size: 100 }, null);
  const inbox = listed.conversations.find((c) => c.conversation_id === conversationId);
  const details = await conversationDetails(tenant.business.id, conversationId);
  // Every reader agrees.
  expect(inbox?.preview).toEqual(row?.preview);
  expect(details.preview).toEqual(row?.preview);
  return row!.preview as Record<string, unknown> | null;
}

describe('conversation previews', () => {
  it('a note written last previews as a NOTE with no channel; the channel filter still sees the text before it', async () => {
    const client = await newClient();
    const textId = await record(t, client.id, 'Can I come at 4?', 'outbound');
    const conversationId = await conversationOf(t, client.id);
    expect(await previews(t, conversationId)).toMatchObject({ message_id: textId, message_type: 'TEXT', channel: 'sms' });

    const note = await postJson(`${t.base}/conversations/${conversationId}/notes`, t.key, {
      content: 'Client prefers texts after 5pm',
    });
    expect(note.status).toBe(200);
    expect(await previews(t, conversationId)).toEqual({
      message_id: note.body.data.message_id,
      message_type: 'NOTE',
      channel: null,
      direction: 'outbound',
      status: note.body.data.message_status,
      content: 'Client prefers texts after 5pm',
      send_at: null,
      unread: false,
    });
    // The list's channel (a filter) stays the last channel a message travelled on.
    expect((await getJson(`${t.base}/clients/${client.id}`, t.key)).body.last_updated_channel).toBe('sms');
  });

  it("an unread conversation previews the client's latest unread message, not our later text; once read, the latest", async () => {
    const client = await newClient();
    await record(t, client.id, 'Is Friday still on?', 'inbound');
    const confirmed = await record(t, client.id, 'Confirmed, thank you!', 'inbound');
    const promo = await record(t, client.id, 'This week only: 20% off color', 'outbound');
    const conversationId = await conversationOf(t, client.id);
    expect(await previews(t, conversationId)).toMatchObject({
      message_id: confirmed,
      direction: 'inbound',
      content: 'Confirmed, thank you!',
      unread: true,
    });

    const read = await postJson(`${t.base}/messages/read`, t.key, { conversation_id: conversationId, is_read: true });
    expect(read.status).toBe(200);
    expect(await previews(t, conversationId)).toMatchObject({ message_id: promo, direction: 'outbound', unread: false });
  });

  it('a scheduled text previews with its status and send_at; once canceled, what came before it', async () => {
    const client = await newClient();
    const before = await record(t, client.id, 'See you soon', 'outbound');
    const sendAt = new Date(Date.now() + 3 * 3_600_000);
    const scheduled = await postJson(`${t.base}/sms`, t.key, {
      sender_type: 'staff',
      send_at: sendAt.toISOString(),
      messages: [{ client_id: client.id, message: 'Reminder: your appointment is tomorrow at 10' }],
    });
    expect(scheduled.status).toBe(200);
    const [id] = scheduled.body.message_ids as number[];
    const conversationId = await conversationOf(t, client.id);
    expect(await previews(t, conversationId)).toMatchObject({
      message_id: id,
      status: 'scheduled',
      send_at: sendAt.toISOString(),
      content: 'Reminder: your appointment is tomorrow at 10',
    });

    expect((await postJson(`${t.base}/messages/${id}/cancel`, t.key, {})).status).toBe(200);
    expect(await previews(t, conversationId)).toMatchObject({ message_id: before, status: 'sent', send_at: null });
  });

  it('keeps to the first 200 characters, and is null for a conversation with no message yet', async () => {
    const client = await newClient();
    await record(t, client.id, 'x'.repeat(PREVIEW_LENGTH + 50), 'outbound');
    const preview = await previews(t, await conversationOf(t, client.id));
    expect(preview?.content).toBe('x'.repeat(PREVIEW_LENGTH));

    const empty = await newClient();
    const created = await postJson(`${t.base}/conversations`, t.key, { client_id: empty.id });
    expect(created.status).toBeLessThan(300);
    expect(await previews(t, created.body.conversation_id)).toBeNull();
  });

  it("never shows another business's message, whatever the ids", async () => {
    const mine = await newClient();
    const theirs = await newClient(other);
    await record(other, theirs.id, 'Their unread secret', 'inbound');
    await record(t, mine.id, 'Our own text', 'outbound');
    const conversationId = await conversationOf(t, mine.id);
    expect(await previews(t, conversationId)).toMatchObject({ content: 'Our own text' });
    const theirList = await getJson(`${other.base}/conversations?page_size=100`, other.key);
    const contents = (theirList.body.conversations as { preview: { content: string } | null }[]).map((c) => c.preview?.content);
    expect(contents).toContain('Their unread secret');
    expect(contents).not.toContain('Our own text');
  });
});
