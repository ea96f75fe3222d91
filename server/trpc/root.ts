import { createCallerFactory, router } from './init';
import { inboxRouter } from './routers/inbox';
import { presenceRouter } from './routers/presence';
import { sandboxRouter } from './routers/sandbox';
import { sessionRouter } from './routers/session';
import { voiceRouter } from './routers/voice';

export const appRouter = router({
  session: sessionRouter,
  inbox: inboxRouter,
  presence: presenceRouter,
  sandbox: sandboxRouter,
  voice: voiceRouter,
});

export type AppRouter = typeof appRouter;
export const createCaller = createCallerFactory(appRouter);
