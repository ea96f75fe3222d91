import { cookies } from 'next/headers';
import { redirect } from 'next/navigation';
import type { ReactNode } from 'react';
import { TrpcProvider } from '@/components/trpc/provider';
import { SESSION_COOKIE } from '@/server/web/credentials';

export const dynamic = 'force-dynamic';

/** Staff pages: without a session cookie there is nothing to show but the sign-in page. */
export default async function InboxLayout({ children }: { children: ReactNode }) {
  const jar = await cookies();
  if (!jar.get(SESSION_COOKIE)) redirect('/login');
  return <TrpcProvider>{children}</TrpcProvider>;
}
