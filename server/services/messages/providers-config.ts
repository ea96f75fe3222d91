import { env } from '@/server/env';

/** The provider name recorded on a message queued now (the worker sends through the same one). */
export const configuredSmsProvider = () => env().smsProvider;
export const configuredEmailProvider = () => env().emailProvider;
