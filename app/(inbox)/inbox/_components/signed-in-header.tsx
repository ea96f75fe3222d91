'use client';
import { trpc } from '@/components/trpc/client';

/** Who is signed in, for which business; a sign-out button. The inbox proper grows around it. */
export function SignedInHeader() {
  const me = trpc.session.me.useQuery();
  const signOut = trpc.session.signOut.useMutation({ onSuccess: () => window.location.assign('/login') });

  if (me.isPending) return <p role="status" style={{ padding: 16 }}>Loading…</p>;
  if (me.error) {
    return (
      <p role="alert" style={{ padding: 16 }}>
        {me.error.data?.code === 'UNAUTHORIZED' ? 'Your session has ended. ' : 'Could not load your profile. '}
        <a href="/login">Sign in again</a>
      </p>
    );
  }
  return (
    <header
      style={{ display: 'flex', alignItems: 'center', gap: 12, padding: '12px 16px', background: 'var(--panel)', borderBottom: '1px solid var(--border)' }}
    >
      <h1 style={{ fontSize: 16, margin: 0 }}>{me.data.businessName}</h1>
      <span data-testid="signed-in-as" style={{ color: 'var(--muted)' }}>
        Signed in as {me.data.staffName}
      </span>
      <button type="button" style={{ marginLeft: 'auto' }} onClick={() => signOut.mutate()} disabled={signOut.isPending}>
        Sign out
      </button>
    </header>
  );
}
