import { z } from 'zod';

export const HealthService = z
  .object({ name: z.string(), status: z.enum(['ok', 'down']), latency_ms: z.number() })
  .meta({ id: 'HealthService' });

export const Health = z
  .object({
    status: z.enum(['ok', 'degraded']),
    version: z.string(),
    uptime_seconds: z.number(),
    services: z.array(HealthService),
  })
  .meta({ id: 'Health' });
