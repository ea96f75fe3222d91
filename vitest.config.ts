import path from 'node:path';
import { defineConfig } from 'vitest/config';

// e2e/ holds the whole-system tools: the browser specs (*.spec.ts, Playwright's) are left to
// Playwright; the unit tests of the runner's planner, the fuzzer and the benchmarks run here.
const EXCLUDE = ['node_modules/**', '.next*/**', '.data/**', 'e2e/**/*.spec.ts'];

/**
 * Test files that never touch PostgreSQL (each read to check: no `db`, no factories, no HTTP test
 * client). They run without a database of their own, DATABASE_URL pointing at a closed port, so one
 * that starts to need PostgreSQL fails at once rather than passing by accident; and the database
 * run against the machine's PostgreSQL (`.ci/run`) leaves them out.
 */
const NO_DATABASE = [
  'components/**/*.test.ts',
  'server/shared/**/*.test.ts',
  'server/lib/**/*.test.ts',
  'e2e/**/*.test.ts',
  'deploy/haproxy.test.ts',
  'server/cli/child-process.test.ts',
  'server/cli/dev-logs.test.ts',
  'server/cli/dev-ready.test.ts',
  'server/documented-values.test.ts',
  'server/providers/smtp.test.ts',
  'server/realtime/stream-meter.test.ts',
  'server/realtime/trpc-sse.test.ts',
  'server/schemas/common.test.ts',
  'server/schemas/reports.test.ts',
  'server/services/compliance/opt-out-words.test.ts',
  'server/services/notifications/recipients.test.ts',
  'server/services/reports/percentiles.test.ts',
  'server/services/reports/touches.test.ts',
  'server/testing/fake-twilio.test.ts',
  'server/testing/lint-boundaries.test.ts',
  'server/testing/server-only.test.ts',
  'server/testing/transaction-style.test.ts',
  'server/trpc/unavailable.test.ts',
  'workers/periodic.test.ts',
  'workers/registrations.test.ts',
];

/**
 * Tests that time themselves (a throughput floor, "done within N s", a kill mid-request, a
 * compaction under a deadline): run after the others, one file at a time, so that parallel test
 * files do not starve them of the two cores. Each has its own database, as in `database`.
 */
const SERIAL = [
  'server/providers/twilio.test.ts',
  'workers/send.test.ts',
  'server/demo/seed.test.ts',
  'server/http/hostile-input.test.ts',
  'server/http/idempotency.test.ts',
  'server/services/conversations/counts.test.ts',
  'server/services/outgoing-webhooks/outgoing-webhooks.test.ts',
  'server/db/pgbouncer.test.ts',
  'deploy/cluster.test.ts',
];

export default defineConfig({
  resolve: {
    alias: {
      '@': path.resolve(import.meta.dirname),
      // Tests run server code on the server, as Next's server bundles do, where `server-only` is this
      // same empty module; under plain Node it throws (server/testing/server-only.test.ts keeps it
      // out of what workers and CLIs import).
      'server-only': path.resolve(import.meta.dirname, 'node_modules/server-only/empty.js'),
    },
  },
  test: {
    exclude: EXCLUDE,
    pool: 'forks',
    // Two files at a time on two cores (vitest's default, one fork fewer than the cores, ran one at
    // a time): the database tests mostly wait on PostgreSQL. More measured faster on a quiet machine
    // but made the tests that time themselves fail under load; those now run alone (SERIAL).
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    env: {
      NODE_ENV: 'test',
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
      PLATFORM_API_KEY: 'test-platform-key-0123456789',
      SESSION_SECRET: 'test-session-secret-0123456789',
      PUBLIC_BASE_URL: 'http://localhost:3000',
    },
    projects: [
      {
        extends: true,
        test: {
          name: 'no-database',
          include: NO_DATABASE,
          exclude: [...EXCLUDE, ...SERIAL],
          env: { DATABASE_URL: 'postgres://postgres@127.0.0.1:1/no_database' },
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'database',
          include: ['**/*.test.ts'],
          exclude: [...EXCLUDE, ...NO_DATABASE, ...SERIAL],
          globalSetup: ['server/testing/global-setup.ts'],
          // Each file gets its own database (a copy of a migrated template), so files run in parallel.
          setupFiles: ['server/testing/setup-database.ts'],
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'serial',
          include: SERIAL,
          globalSetup: ['server/testing/global-setup.ts'],
          setupFiles: ['server/testing/setup-database.ts'],
          maxWorkers: 1,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
