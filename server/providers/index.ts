import { env } from '@/server/env';
import { createSandboxEmailProvider, createSandboxSmsProvider } from './sandbox';
import { createSmtpProvider } from './smtp';
import { createTwilioProvider } from './twilio';
import type { EmailProvider, SmsProvider } from './types';

/** The configured providers (docs/providers.md#which-provider-does-what): built once per process, by workers only. */
let sms: SmsProvider | undefined;
let email: EmailProvider | undefined;

export function smsProvider(): SmsProvider {
  if (sms) return sms;
  const config = env();
  if (config.smsProvider === 'twilio') {
    if (!config.twilio.accountSid || !config.twilio.authToken)
      throw new Error('TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN are required for SMS_PROVIDER=twilio');
    sms = createTwilioProvider({
      accountSid: config.twilio.accountSid,
      authToken: config.twilio.authToken,
      apiBaseUrl: config.twilio.apiBaseUrl,
    });
  } else {
    sms = createSandboxSmsProvider();
  }
  return sms;
}

export function emailProvider(): EmailProvider {
  if (email) return email;
  const config = env();
  email =
    config.emailProvider === 'smtp' && config.smtpUrl
      ? createSmtpProvider({ url: config.smtpUrl })
      : createSandboxEmailProvider();
  return email;
}

/** The URL Twilio posts SMS status callbacks to (docs/providers.md#twilio-status-callbacks): PUBLIC_BASE_URL + the webhook path. */
export function smsStatusCallbackUrl(): string {
  return `${env().publicBaseUrl}/api/v1/webhooks/twilio/sms/status`;
}

export async function closeProviders(): Promise<void> {
  await email?.close();
  email = undefined;
  sms = undefined;
}
