import { desc, eq, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db } from '@/server/db/client';
import { messages } from '@/db/schema';
import { createClient, createConversation, createMessage, createStaff } from '@/server/testing/factories';
import { getJson, restTenant } from '@/server/testing/http';
import { messageItemsJson, selectMessageItems, toMessageItem } from './serialize';

/**
 * Lists read only what they show: an email's HTML (in provider_metadata, up to 5 MB) and its
 * attachments' bytes (base64 in the attachments column, up to 5 MiB each) stay in the database.
 */
describe('message lists', () => {
  it('never select provider_metadata or attachment bytes', () => {
    const { sql } = selectMessageItems(db).toSQL();
    // provider_metadata only for an inbound text's reading of an appointment reply, never an email's HTML.
    expect(
      sql.replace(/case\s+when "messages"\."channel" = 'sms' and "messages"\."direction" = 'inbound'[\s\S]*? end/, ''),
    ).not.toContain('provider_metadata');
    expect(sql).toContain(`jsonb_agg(a - 'content')`);
    // The column is read only inside the stripping expression.
    expect(sql.match(/"messages"\."attachments"/g)).toEqual(['"messages"."attachments"']);
    expect(sql).toMatch(/jsonb_array_elements\("messages"\."attachments"\)/);
  });

  it('a page of emails with 5 MiB attachments and 5 MB of HTML lists their attachments without the bytes', async () => {
    const t = await restTenant();
    const client = await createClient(t.business.id);
    const conversation = await createConversation(t.business.id, client.id);
    const bytes = 'A'.repeat(5 * 1024 * 1024);
    for (let i = 0; i < 4; i++) {
      await createMessage(conversation, {
        channel: 'email',
        messageType: 'EMAIL',
        subject: `Menu ${i}`,
        attachments: [{ filename: 'menu.pdf', content_type: 'application/pdf', url: null, size: 3_932_160, content: bytes }],
        providerMetadata: { html: `<p>${'x'.repeat(5_000_000)}</p>` },
      });
    }
    const res = await getJson(`${t.base}/conversations/${conversation.id}/messages?page_size=100`, t.key);
    expect(res.status).toBe(200);
    expect(res.body.messages).toHaveLength(4);
    for (const m of res.body.messages)
      expect(m.attachments).toEqual([
        { filename: 'menu.pdf', content_type: 'application/pdf', url: null, size: 3_932_160, media_id: null },
      ]);
    expect(JSON.stringify(res.body).length).toBeLessThan(20_000);
  });
});

describe('MessageItems as JSON built by PostgreSQL (pages and searches)', () => {
  it('are key for key, in the same order, what toMessageItem makes of the same rows', async () => {
    const t = await restTenant();
    const staff = await createStaff(t.business.id, { name: 'Ana "the colorist" Ruiz' });
    const client = await createClient(t.business.id, { name: 'Zoë \\ Ñandú' });
    const conversation = await createConversation(t.business.id, client.id);
    const at = (s: number) => new Date(Date.UTC(2026, 10, 20, 9, 0, s, 987));
    await createMessage(conversation, { content: 'plain text', sentAt: at(1) });
    await createMessage(conversation, {
      channel: 'email',
      messageType: 'EMAIL',
      direction: 'inbound',
      senderType: 'client',
      status: 'received',
      subject: 'Line\nbreak\t"quoted" 😀 \u0001',
      content: '<b>html</b> & \u2028',
      cc: ['a@example.test', 'b@example.test'],
      bcc: [],
      attachments: [
        { filename: 'menu.pdf', content_type: 'application/pdf', url: null, size: 12, content: 'AAAA' },
        { filename: 'pic.jpg', content_type: 'image/jpeg', url: 'https://example.test/p.jpg', size: null, media_id: 7 },
      ],
      isRead: false,
      flagged: true,
      sentAt: at(2),
    });
    await createMessage(conversation, {
      status: 'scheduled',
      category: 'reminder',
      notificationType: 'appointment_reminder' as never,
      sendAt: at(3),
      holdReason: 'quiet_hours',
      quietHours: { time_zone: 'America/New_York', start: 480, end: 1440 },
      cancelOnReply: false,
      staffId: staff.id,
      sentAt: at(2),
      requestId: '0b6b4f44-2a8e-4c38-9a55-0a3c1d5f8e21',
      segments: 2,
      attempts: 3,
      errorCode: '30007',
      errorMessage: 'Carrier "filtered"',
    });
    await createMessage(conversation, {
      channel: 'voice',
      messageType: 'CALL',
      direction: 'inbound',
      senderType: 'client',
      status: 'completed' as never,
      callDurationSeconds: 0,
      callOutcome: 'missed',
      recordingUrl: 'https://example.test/r.mp3',
      content: null,
      attachments: [],
      sentAt: at(4),
    });
    await createMessage(conversation, { messageType: 'NOTE', channel: null, staffId: staff.id, sentAt: at(5) });
    // Microseconds: both forms truncate to milliseconds.
    await db.execute(
      sql`update messages set sent_at = sent_at + interval '0.000999 second' where conversation_id = ${conversation.id}`,
    );

    const rows = await selectMessageItems(db)
      .where(eq(messages.conversationId, conversation.id))
      .orderBy(desc(messages.sentAt), desc(messages.id));
    const [built] = await db.execute<{ items: string }>(
      sql`select ${messageItemsJson(sql`select id, sent_at from messages where conversation_id = ${conversation.id}`)} as items`,
    );
    expect(rows).toHaveLength(5);
    expect(JSON.stringify(JSON.parse(built!.items))).toBe(JSON.stringify(rows.map(toMessageItem)));

    // The REST page and the search answer with the same items.
    const page = await getJson(`${t.base}/conversations/${conversation.id}/messages`, t.key);
    expect(JSON.stringify(page.body.messages)).toBe(JSON.stringify(rows.map(toMessageItem)));
    const found = await getJson(`/api/v1/messages/${t.business.id}/search?search_term=html`, t.key);
    expect(found.body.messages).toEqual([toMessageItem(rows.find((r) => r.messageType === 'EMAIL')!)]);
  });
});
