import { initTRPC, tracked, TRPCError } from '@trpc/server';
import { fetchRequestHandler } from '@trpc/server/adapters/fetch';
import superjson from 'superjson';
import { describe, expect, it } from 'vitest';
import type { PresenceFrame } from '@/server/shared/presence';
import type { InboxEvent } from './frames';
import { CONNECTED_FRAME, errorFrame, eventFrame, presenceFrame, type StreamEndCode } from './trpc-sse';

/**
 * The live event stream writes tRPC subscription frames itself (trpc-sse.ts). Here tRPC's own SSE
 * producer, with the transformer the app uses (superjson), serves a subscription at the same path
 * that yields events tracked with their ids (and a presence frame untracked) and ends with each error a stream can end with: its
 * bytes must be ours.
 */
type Streamed = [number, InboxEvent] | PresenceFrame;

async function trpcStream(events: Streamed[], end: { code: StreamEndCode; message: string }): Promise<string> {
  const t = initTRPC.create({ transformer: superjson, isDev: false });
  const router = t.router({
    inbox: t.router({
      events: t.procedure.subscription(async function* () {
        for (const e of events) yield Array.isArray(e) ? tracked(String(e[0]), e[1]) : e;
        throw new TRPCError(end);
      }),
    }),
  });
  const res = await fetchRequestHandler({
    endpoint: '/api/trpc',
    req: new Request('http://localhost:3000/api/trpc/inbox.events'),
    router,
    createContext: () => ({}),
  });
  expect(res.headers.get('content-type')).toBe('text/event-stream');
  return res.text();
}

describe('tRPC subscription frames, byte for byte', () => {
  const events: Streamed[] = [
    { type: 'presence', businessId: 7, snapshot: true, conversations: [] },
    [41, { type: 'message.created', businessId: 7, conversationIds: [1], messageIds: [30] }],
    {
      type: 'presence',
      businessId: 7,
      snapshot: false,
      conversations: [{ conversationId: 1, staff: [{ staffId: 3, state: 'replying' }] }],
    },
    [9_007_199_254_740_991, { type: 'conversation.updated', businessId: 7, conversationIds: [9_007_199_254_740_991] }],
    [0, { type: 'refetch', businessId: 7, conversationIds: [] }],
  ];

  it.each<[StreamEndCode, string]>([
    ['SERVICE_UNAVAILABLE', 'Live events were interrupted; reconnect and refetch'],
    ['UNAUTHORIZED', 'Signed out: this session has ended'],
    ['CONFLICT', 'Opened in another tab: this session has the most live streams it may hold open'],
    ['TOO_MANY_REQUESTS', 'This business holds the most live streams it may (EVENT_STREAMS_PER_BUSINESS=200)'],
  ])('connected, three events and two presence frames, then %s', async (code, message) => {
    const ours = Buffer.concat([
      CONNECTED_FRAME,
      ...events.map((e) => (Array.isArray(e) ? eventFrame(e[1], e[0]) : presenceFrame(e))),
      errorFrame(code, message),
    ]).toString();
    expect(ours).toBe(await trpcStream(events, { code, message }));
  });
});
