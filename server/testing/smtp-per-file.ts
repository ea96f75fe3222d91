import { afterAll, beforeAll, beforeEach } from 'vitest';
import { createSmtpProvider } from '@/server/providers/smtp';
import type { EmailProvider } from '@/server/providers/types';
import { startSmtpSink, type SmtpSink } from './smtp-sink';

/**
 * A sink and an SMTP provider pointed at it for a whole test file, emptied before each test: the
 * file's tests send real mail through `provider()` and read it from `sink()`.
 */
export function smtpSinkPerFile(): { sink: () => SmtpSink; provider: () => EmailProvider } {
  let sink: SmtpSink | undefined;
  let provider: EmailProvider | undefined;
  beforeAll(async () => {
    sink = await startSmtpSink();
    provider = createSmtpProvider({ url: sink.url });
  });
  afterAll(async () => {
    await provider?.close();
    await sink?.close();
  });
  beforeEach(() => sink!.clear());
  return { sink: () => sink!, provider: () => provider! };
}
