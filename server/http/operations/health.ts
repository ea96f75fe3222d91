import { z } from 'zod';
import { Health, HealthService } from '@/server/schemas/health';
import { defineOperation } from '../operation';

export const getHealth = defineOperation({
  operationId: 'getHealth',
  method: 'get',
  path: '/health',
  tag: 'health',
  summary: 'Get health',
  description: 'Always 200 while the process runs; `status` is `degraded` when a dependency is down.',
  auth: 'none',
  response: Health,
});

export const getDatabaseHealth = defineOperation({
  operationId: 'checkDatabaseConnection',
  method: 'get',
  path: '/health/db',
  tag: 'health',
  summary: 'Check database connection',
  description: '200 when PostgreSQL answers, 503 (same body, `status: "down"`) when it does not.',
  auth: 'none',
  response: HealthService,
  errors: [503],
});

export const getLiveness = defineOperation({
  operationId: 'getLiveness',
  method: 'get',
  path: '/health/live',
  tag: 'health',
  summary: 'Liveness',
  description:
    'Answers 200 as long as the process serves requests; checks no dependency (use /health for that). ' +
    'While the web process shuts down (SIGTERM: it finishes the requests it has, then exits) it answers 503 ' +
    '`{"status": "draining", "detail": …}` so a load balancer takes it out of rotation.',
  auth: 'none',
  response: z.object({ status: z.literal('ok') }),
  errors: [503],
});
