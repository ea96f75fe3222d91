'use client';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { httpBatchLink, httpSubscriptionLink, retryLink, splitLink } from '@trpc/client';
import { useState, type ReactNode } from 'react';
import superjson from 'superjson';
import { MAX_TRPC_BATCH } from '@/server/shared/limits';
import { trpc } from './client';
import { retryDelayMs, retryQuery, retrySubscription, subscriptionRetryDelayMs } from './retry';

/** React Query + tRPC for the inbox; the session cookie rides along on every same-origin call. */
export function TrpcProvider({ children }: { children: ReactNode }) {
  const [queryClient] = useState(
    () =>
      new QueryClient({
        defaultOptions: {
          queries: { staleTime: 30_000, retry: retryQuery, retryDelay: retryDelayMs, refetchOnWindowFocus: false },
        },
      }),
  );
  const [client] = useState(() =>
    trpc.createClient({
      links: [
        // Subscriptions (live inbox events) over SSE; everything else batched over HTTP.
        splitLink({
          condition: (op) => op.type === 'subscription',
          // A stream the browser gave up on is opened again with backoff, unless the session is
          // gone or another tab took its place (retrySubscription).
          true: [
            retryLink({ retry: ({ error }) => retrySubscription(error), retryDelayMs: subscriptionRetryDelayMs }),
            httpSubscriptionLink({ url: '/api/trpc', transformer: superjson }),
          ],
          false: httpBatchLink({ url: '/api/trpc', transformer: superjson, maxItems: MAX_TRPC_BATCH }),
        }),
      ],
    }),
  );
  return (
    <trpc.Provider client={client} queryClient={queryClient}>
      <QueryClientProvider client={queryClient}>{children}</QueryClientProvider>
    </trpc.Provider>
  );
}
