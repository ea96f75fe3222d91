import path from 'node:path';
import { defineConfig } from 'vitest/config';

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
    include: ['**/*.test.ts'],
    // e2e/ holds the whole-system tools: the browser specs (*.spec.ts, Playwright's) are left to
    // Playwright; the unit tests of the runner's planner, the fuzzer and the benchmarks run here.
    exclude: ['node_modules/**', '.next*/**', '.data/**', 'e2e/**/*.spec.ts'],
    globalSetup: ['server/testing/global-setup.ts'],
    setupFiles: ['server/testing/setup-database.ts'],
    // Each file gets its own database (a copy of a migrated template), so files run in parallel.
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    env: {
      NODE_ENV: 'test',
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
      PLATFORM_API_KEY: 'test-platform-key-0123456789',
      SESSION_SECRET: 'test-session-secret-0123456789',
      PUBLIC_BASE_URL: 'http://localhost:3000',
    },
  },
});
