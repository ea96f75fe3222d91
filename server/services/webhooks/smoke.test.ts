import { getExpectedTwilioSignature } from 'twilio/lib/webhooks/webhooks';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db } from '@/db/client';
import { clients, conversations, messages, webhookEvents } from '@/db/schema';
import { createSmsNumber, createTenant } from '@/server/testing/factories';
import { api } from '@/server/testing/http';

const TOKEN = 'sandbox-dev-auth-token-not-secret';
function signed(path: string, params: Record<string, string>) {
  const url = `http://localhost:3000${path}`;
  return { headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': getExpectedTwilioSignature(TOKEN, url, params) }, body: new URLSearchParams(params).toString() };
}

describe('twilio webhooks smoke', () => {
  it('inbound SMS creates a lead, a conversation and a received message; status callbacks move forward', async () => {
    const t = await createTenant();
    const number = await createSmsNumber(t.business.id);
    const params = { MessageSid: 'SM' + 'a'.repeat(32), AccountSid: 'AC1', From: '+14155550901', To: number.phoneNumber, Body: 'Can I move to Thursday?', NumMedia: '0' };
    const res = await api.post('/api/v1/webhooks/twilio/sms/incoming', signed('/api/v1/webhooks/twilio/sms/incoming', params));
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('<Response>');
    const [lead] = await db.select().from(clients).where(eq(clients.phoneNumber, '+14155550901'));
    expect(lead!.clientType).toBe('lead');
    const [conv] = await db.select().from(conversations).where(eq(conversations.clientId, lead!.id));
    expect(conv!.unreadCount).toBe(1);
    const again = await api.post('/api/v1/webhooks/twilio/sms/incoming', signed('/api/v1/webhooks/twilio/sms/incoming', params));
    expect(again.status).toBe(200);
    expect(await db.select().from(messages).where(eq(messages.conversationId, conv!.id))).toHaveLength(1);
    const bad = await api.post('/api/v1/webhooks/twilio/sms/incoming', { ...signed('/api/v1/webhooks/twilio/sms/incoming', params), body: new URLSearchParams({ ...params, Body: 'tampered' }).toString() });
    expect(bad.status).toBe(403);

    const [out] = await db.insert(messages).values({ businessId: t.business.id, conversationId: conv!.id, clientId: lead!.id, channel: 'sms', direction: 'outbound', messageType: 'TEXT', senderType: 'staff', content: 'x', status: 'sent', provider: 'twilio', providerMessageId: 'SM' + 'b'.repeat(32) }).returning();
    for (const s of ['delivered', 'sent', 'queued']) {
      const p = { MessageSid: out!.providerMessageId!, MessageStatus: s, AccountSid: 'AC1' };
      expect((await api.post('/api/v1/webhooks/twilio/sms/status', signed('/api/v1/webhooks/twilio/sms/status', p))).status).toBe(200);
    }
    const [after] = await db.select().from(messages).where(eq(messages.id, out!.id));
    expect(after!.status).toBe('delivered');
    const events = await db.select().from(webhookEvents);
    expect(events.map((e) => e.outcome).sort()).toEqual(['ignored', 'ignored', 'processed', 'processed']);
  });
});
