import { z } from 'zod';
import { id, timestampOut } from './common';

export const SESSION_TTL = { min: 60, max: 604800, default: 43200 } as const;

export const AuthParameters = z
  .object({
    business_id: id,
    staff_id: id,
    ttl_seconds: z.number().int().min(SESSION_TTL.min).max(SESSION_TTL.max).default(SESSION_TTL.default),
  })
  .meta({ id: 'AuthParameters' });

export const AuthTokenResponse = z
  .object({
    access_token: z.string().meta({
      description: 'Bearer token for API use (`Authorization: Bearer …`); the login link carries a separate one-time code',
    }),
    token_type: z.literal('bearer'),
    expires_at: timestampOut,
    business_id: z.number().int(),
    staff_id: z.number().int(),
    login_url: z.string().meta({
      description:
        '`/login?token=…` with a one-time login code (not the access token): valid once, for 10 minutes. Its first use opens a browser session of its own (ended with this one) and redirects to /inbox; a second use shows that the link was already used or has expired.',
    }),
  })
  .meta({ id: 'AuthTokenResponse' });

export const SessionExpiryRequest = z
  .object({
    access_token: z
      .string()
      .min(1)
      .max(512)
      .optional()
      .meta({ description: 'Required with an API key; omitted with a session = the calling session' }),
  })
  .meta({ id: 'SessionExpiryRequest' });
