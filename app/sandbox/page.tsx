import type { Metadata } from 'next';
import { cookies } from 'next/headers';
import { notFound, redirect } from 'next/navigation';
import { SandboxApp } from '@/components/sandbox/sandbox-app';
import { TrpcProvider } from '@/components/trpc/provider';
import { SESSION_COOKIE } from '@/server/http/credentials';
import { sandboxEnabled } from '@/server/services/sandbox/phone';

export const dynamic = 'force-dynamic';
export const metadata: Metadata = { title: 'Sandbox', robots: { index: false } };

/**
 * /sandbox (docs/api.md#sandbox): exists only while the sandbox SMS and email providers are
 * in use; with Twilio or SMTP configured it is a 404, like its tRPC procedures. Staff only: the
 * same session cookie as /inbox, and only that staff member's business's clients.
 */
export default async function SandboxPage() {
  if (!sandboxEnabled()) notFound();
  const jar = await cookies();
  if (!jar.get(SESSION_COOKIE)) redirect('/login');
  return (
    <TrpcProvider>
      <SandboxApp />
    </TrpcProvider>
  );
}
