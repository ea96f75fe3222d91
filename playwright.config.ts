import { existsSync } from 'node:fs';
import { defineConfig, devices } from '@playwright/test';

/**
 * Browser tests against a production build (`next build` + `next start`) with its own embedded
 * PostgreSQL, started by e2e/browser/e2e-server.ts. Debian's Chromium when installed (Playwright
 * cannot download browsers here); Playwright's own browser elsewhere.
 */
const WEB_PORT = Number(process.env.E2E_WEB_PORT ?? 3100);
const PG_PORT = Number(process.env.E2E_PG_PORT ?? 54339);
const chromium = process.env.CHROMIUM_PATH ?? (existsSync('/usr/bin/chromium') ? '/usr/bin/chromium' : undefined);

// Shared by the server and the test workers (fixtures create their own rows in the same database).
process.env.E2E_DATABASE_URL = `postgres://postgres:postgres@127.0.0.1:${PG_PORT}/messaging`;
process.env.PLATFORM_API_KEY ??= 'e2e-platform-key-0123456789';
process.env.SESSION_SECRET ??= 'e2e-session-secret-0123456789';
process.env.PUBLIC_BASE_URL = `http://localhost:${WEB_PORT}`;
// The server runs as production, where webhook secrets have no development default: tests sign
// Twilio webhooks and Inbound Parse posts with these, exactly as the providers would.
process.env.TWILIO_AUTH_TOKEN ??= 'e2e-twilio-auth-token';
process.env.EMAIL_INBOUND_SECRET ??= 'e2e-inbound-secret';
// Voice is configured with made-up credentials (tokens are signed offline; Twilio is never
// reached from the tests), while SMS and email stay on the sandbox providers.
// MMS media is fetched by the server from Twilio's API host; here, from the fake Twilio that
// e2e/browser/mms.spec.ts starts on this port (SMS itself stays on the sandbox provider).
process.env.E2E_TWILIO_PORT ??= String(WEB_PORT + 7);
const voice = {
  TWILIO_ACCOUNT_SID: 'AC' + '0'.repeat(32),
  TWILIO_API_KEY_SID: 'SK' + '0'.repeat(32),
  TWILIO_API_KEY_SECRET: 'e2e-api-key-secret',
  TWILIO_TWIML_APP_SID: 'AP' + '0'.repeat(32),
};

export default defineConfig({
  testDir: 'e2e/browser',
  testMatch: '**/*.spec.ts',
  outputDir: 'test-results',
  fullyParallel: true,
  workers: process.env.CI ? 2 : undefined,
  retries: 0,
  reporter: process.env.CI ? [['list']] : [['list'], ['html', { open: 'never' }]],
  // Generous for slow machines: on a VM whose host reclaims its page cache, Chromium starts a page
  // in ~0.5 s and a spec runs 3-7x slower than on an idle desktop. A test with more to do calls
  // test.slow() (three times this).
  timeout: 60_000,
  expect: { timeout: 15_000 },
  use: {
    baseURL: `http://localhost:${WEB_PORT}`,
    trace: 'retain-on-failure',
    screenshot: 'only-on-failure',
  },
  projects: [
    {
      name: 'chromium',
      use: {
        ...devices['Desktop Chrome'],
        viewport: { width: 1280, height: 800 },
        launchOptions: {
          executablePath: chromium,
          args: [
            '--no-sandbox',
            '--disable-gpu',
            '--disable-background-networking',
            '--disable-component-update',
            '--disable-sync',
            '--no-first-run',
          ],
        },
      },
    },
  ],
  webServer: {
    command: 'node_modules/.bin/tsx e2e/browser/e2e-server.ts',
    url: `http://localhost:${WEB_PORT}/api/v1/health`,
    timeout: 300_000,
    reuseExistingServer: !process.env.CI,
    stdout: 'pipe',
    stderr: 'pipe',
    env: {
      E2E_WEB_PORT: String(WEB_PORT),
      E2E_PG_PORT: String(PG_PORT),
      DATABASE_URL: process.env.E2E_DATABASE_URL,
      PLATFORM_API_KEY: process.env.PLATFORM_API_KEY,
      SESSION_SECRET: process.env.SESSION_SECRET,
      PUBLIC_BASE_URL: process.env.PUBLIC_BASE_URL,
      TWILIO_AUTH_TOKEN: process.env.TWILIO_AUTH_TOKEN,
      EMAIL_INBOUND_SECRET: process.env.EMAIL_INBOUND_SECRET,
      SMS_PROVIDER: 'sandbox',
      // The sandbox specs play the clients on /sandbox, which production serves only when asked.
      SANDBOX_ENABLED: 'true',
      ...voice,
      TWILIO_API_BASE_URL: `http://127.0.0.1:${process.env.E2E_TWILIO_PORT}`,
      // e2e/browser/webhooks.spec.ts's receiver listens on 127.0.0.1 over plain http.
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      LOG_LEVEL: 'warn',
    },
  },
});
