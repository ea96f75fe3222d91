import { randomBytes } from 'node:crypto';
import { smsSegments } from '@/server/shared/sms-segments';
import { newEmailMessageId } from './smtp';
import type { EmailProvider, SmsProvider } from './types';

/**
 * Development providers: no network. The SMS sandbox accepts every message with a Twilio-style
 * sid; the send worker then plays `sent` and `delivered` through the same status service the
 * webhooks use (a delayed `sandbox.status` job), so development exercises the real path.
 */
export function createSandboxSmsProvider(): SmsProvider {
  return {
    name: 'sandbox',
    async send(request) {
      return {
        providerMessageId: `SM${randomBytes(16).toString('hex')}`,
        status: 'queued',
        segments: smsSegments(request.body).segments,
      };
    },
    // Nothing leaves the machine, so there is nothing to find: a resend is harmless.
    async findSent() {
      return null;
    },
  };
}

export function createSandboxEmailProvider(): EmailProvider {
  return {
    name: 'sandbox',
    async send(request) {
      return {
        messageId: request.emailMessageId ?? newEmailMessageId(request.from),
        accepted: [request.to, ...(request.cc ?? []), ...(request.bcc ?? [])],
        rejected: [],
      };
    },
    async close() {},
  };
}

/** What the sandbox plays after accepting a message, and after how many seconds. */
export const SANDBOX_PLAYBACK = [
  { status: 'sent', afterSeconds: 1 },
  { status: 'delivered', afterSeconds: 2 },
] as const;
