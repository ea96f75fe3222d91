import { createCallerFactory, router } from './init';
import { inboxRouter } from './routers/inbox';
import { sessionRouter } from './routers/session';

export const appRouter = router({
  session: sessionRouter,
  inbox: inboxRouter,
});

export type AppRouter = typeof appRouter;
export const createCaller = createCallerFactory(appRouter);
