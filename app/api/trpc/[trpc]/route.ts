import { fetchRequestHandler } from '@trpc/server/adapters/fetch';
import { createContext } from '@/server/trpc/init';
import { appRouter } from '@/server/trpc/root';

// The inbox's only door to the server: queries, mutations and (later) the live-events subscription.
const handler = (req: Request) =>
  fetchRequestHandler({ endpoint: '/api/trpc', req, router: appRouter, createContext: () => createContext({ req }) });

export { handler as GET, handler as POST };
