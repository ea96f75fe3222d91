import { describe, expect, it } from 'vitest';
import { db } from '@/db/client';
import { createClient, createConversation, createMessage } from '@/server/testing/factories';
import { getJson, restTenant } from '@/server/testing/http';
import { selectMessageItems } from './serialize';

/**
 * Lists read only what they show: an email's HTML (in provider_metadata, up to 5 MB) and its
 * attachments' bytes (base64 in the attachments column, up to 5 MiB each) stay in the database.
 */
describe('message lists', () => {
  it('never select provider_metadata or attachment bytes', () => {
    const { sql } = selectMessageItems(db).toSQL();
    expect(sql).not.toContain('provider_metadata');
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
