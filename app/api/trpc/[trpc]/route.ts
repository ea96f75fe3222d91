import { fetchRequestHandler } from '@trpc/server/adapters/fetch';
import { AppError } from '@/server/errors';
import { logger } from '@/server/logger';
import { MAX_TRPC_BATCH } from '@/server/shared/limits';
import { errorResponse, MAX_BODY_BYTES, readBody } from '@/server/http/route';
import { requestIdOf } from '@/server/web/request-id';
import { createContext } from '@/server/trpc/init';
import { appRouter } from '@/server/trpc/root';

// The inbox's only door to the server: queries, mutations and the live-events subscription. Before
// tRPC sees a request: the batch size from the URL, and the body read to at most the REST limit
// (10 MiB, the largest input being an email with attachments), so neither costs more than it may.
const handler = async (req: Request): Promise<Response> => {
  const requestId = requestIdOf(req);
  const headers = { 'X-Request-Id': requestId };
  let request = req;
  try {
    const procedures = new URL(req.url).pathname.replace(/^\/api\/trpc\/?/, '');
    if (procedures.split(',').length > MAX_TRPC_BATCH) {
      throw new AppError('bad_request', `A batch may carry at most ${MAX_TRPC_BATCH} calls`);
    }
    if (req.method === 'POST') {
      const body = await readBody(req, MAX_BODY_BYTES);
      request = new Request(req.url, { method: 'POST', headers: req.headers, body: new Uint8Array(body), signal: req.signal });
    }
  } catch (err) {
    const response = errorResponse(err, requestId, logger);
    response.headers.set('X-Request-Id', requestId);
    return response;
  }
  return fetchRequestHandler({
    endpoint: '/api/trpc',
    req: request,
    router: appRouter,
    createContext: () => createContext({ req: request, requestId }),
    responseMeta: () => ({ headers }),
  });
};

export { handler as GET, handler as POST };
