import { createCallerFactory, router } from './init';
import { sessionRouter } from './routers/session';

export const appRouter = router({
  session: sessionRouter,
});

export type AppRouter = typeof appRouter;
export const createCaller = createCallerFactory(appRouter);
