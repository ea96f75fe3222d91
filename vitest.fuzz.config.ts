import path from 'node:path';
import { defineConfig } from 'vitest/config';

/**
 * `npm run test:fuzz`: the OpenAPI fuzzer against a production build (e2e/fuzz). One
 * file, its own stack (no shared test database), generous timeouts: it sends 10,000 requests.
 */
export default defineConfig({
  resolve: { alias: { '@': path.resolve(import.meta.dirname) } },
  test: {
    include: ['e2e/fuzz/*.fuzz.ts'],
    testTimeout: 900_000,
    hookTimeout: 600_000,
    env: { NODE_ENV: 'test', LOG_LEVEL: 'silent' },
  },
});
