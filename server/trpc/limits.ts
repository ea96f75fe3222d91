/**
 * The most procedure calls one batched tRPC request may carry. The inbox's client batches at most
 * this many (components/trpc/provider.tsx); the server refuses more before any work
 * (app/api/trpc/[trpc]/route.ts). No imports: the browser bundle reads it too.
 */
export const MAX_TRPC_BATCH = 10;
