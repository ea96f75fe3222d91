import { sql, type SQL } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db } from '@/server/db/client';
import { AppError } from '@/server/errors';
import { escapeLike } from '@/server/lib/pg-text';
import { PaginatedMessages } from '@/server/schemas/messages';
import { createClient, createConversation, createMessage, createTenant } from '@/server/testing/factories';
import { api, jsonOf } from '@/server/testing/http';
import { genericPlan } from '@/server/testing/plans';
import { SEARCH_TOTAL_CAP } from '@/server/schemas/messages';
import { pendingSearchPages } from '@/server/testing/search-index';
import { matchQuery, mergeSearchIndexPendingLists, searchMessages, searchQuery } from './search';

/**
 * docs/api.md#search: `GET /messages/{business_id}/conversations/{conversation_id}/messages/search`
 * and `GET /messages/{business_id}/search`, and the service behind them (also used by the inbox).
 */

async function tenant() {
  const t = await createTenant();
  const client = await createClient(t.business.id);
  const conversation = await createConversation(t.business.id, client.id);
  return { ...t, client, conversation, headers: { 'x-api-key': t.apiKey } };
}
type Tenant = Awaited<ReturnType<typeof tenant>>;
type Conversation = Tenant['conversation'];

/** A second conversation (another client) in the same business. */
async function anotherConversation(t: Tenant) {
  const client = await createClient(t.business.id);
  return createConversation(t.business.id, client.id);
}

const at = (minutesAgo: number) => new Date(Date.now() - minutesAgo * 60_000);
const text = (c: Conversation, content: string, sentAt = at(10)) => createMessage(c, { content, sentAt });
const email = (c: Conversation, subject: string, content: string, sentAt = at(10)) =>
  createMessage(c, { channel: 'email', messageType: 'EMAIL', subject, content, provider: 'smtp', sentAt });
const note = (c: Conversation, content: string, sentAt = at(10)) =>
  createMessage(c, { channel: null, messageType: 'NOTE', content, provider: null, providerMessageId: null, sentAt });

const search = (t: Tenant, term: string, extra: Partial<Parameters<typeof searchMessages>[0]> = {}) =>
  searchMessages({ businessId: t.business.id, term, page: 1, pageSize: 25, ...extra });
const idsOf = (page: { messages: { message_id: number }[] }) => page.messages.map((m) => m.message_id);

const conversationUrl = (t: Tenant, conversationId: number, query: string) =>
  `/api/v1/messages/${t.business.id}/conversations/${conversationId}/messages/search?${query}`;
const businessUrl = (t: Tenant, query: string) => `/api/v1/messages/${t.business.id}/search?${query}`;

async function getPage(t: Tenant, url: string) {
  const res = await api.get(url, { headers: t.headers });
  expect(res.status, await res.clone().text()).toBe(200);
  return PaginatedMessages.parse(await jsonOf(res));
}

async function rejection(promise: Promise<unknown>): Promise<AppError> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AppError);
  return err as AppError;
}

describe('search term', () => {
  it('under 3 characters after trimming is a 422 on query.search_term, in the service and on both endpoints', async () => {
    const t = await tenant();
    const m = await text(t.conversation, 'xx abc yy');
    for (const term of ['ab', '  ab  ', '   ', '']) {
      const err = await rejection(search(t, term));
      expect(err.code).toBe('validation');
      expect(err.extra.issues?.map((i) => i.loc)).toEqual([['query', 'search_term']]);
    }
    for (const url of [
      businessUrl(t, 'search_term=ab'),
      businessUrl(t, `search_term=${encodeURIComponent('  ab  ')}`),
      conversationUrl(t, t.conversation.id, 'search_term=ab'),
      conversationUrl(t, t.conversation.id, `search_term=${encodeURIComponent('  ab  ')}`),
    ]) {
      const res = await api.get(url, { headers: t.headers });
      expect(res.status, url).toBe(422);
      const body = await jsonOf(res);
      expect(body.detail.map((d: { loc: unknown }) => d.loc)).toEqual([['query', 'search_term']]);
    }
    // Missing entirely: 422 "Field required" on the same loc.
    const missing = await api.get(businessUrl(t, ''), { headers: t.headers });
    expect(missing.status).toBe(422);
    expect((await jsonOf(missing)).detail).toEqual([{ loc: ['query', 'search_term'], msg: 'Field required', type: 'missing' }]);
    // Three characters once trimmed are enough, and the spaces are not part of the match.
    expect(idsOf(await search(t, '  abc  '))).toEqual([m.id]);
    expect(idsOf(await getPage(t, businessUrl(t, `search_term=${encodeURIComponent(' abc ')}`)))).toEqual([m.id]);
  });
});

describe('matching', () => {
  it('treats %, _ and backslash in the term literally', async () => {
    const t = await tenant();
    const percent = await text(t.conversation, 'Spring sale: 100% off everything');
    await text(t.conversation, 'You have 1000 points');
    const underscore = await text(t.conversation, 'tag a_b here');
    await text(t.conversation, 'tag axb here');
    const backslash = await text(t.conversation, 'saved in C:\\new\\dir');
    await text(t.conversation, 'saved in C:new');

    expect(idsOf(await search(t, '100%'))).toEqual([percent.id]);
    expect(idsOf(await search(t, 'a_b'))).toEqual([underscore.id]);
    expect(idsOf(await search(t, 'C:\\new'))).toEqual([backslash.id]);
    // Only wildcards: would match everything if they were not escaped.
    expect((await search(t, '%%%')).total_messages).toBe(0);
    expect((await search(t, '___')).total_messages).toBe(0);
    // Through REST, in both variants.
    expect(idsOf(await getPage(t, businessUrl(t, `search_term=${encodeURIComponent('100%')}`)))).toEqual([percent.id]);
    expect(idsOf(await getPage(t, conversationUrl(t, t.conversation.id, 'search_term=a_b')))).toEqual([underscore.id]);
  });

  it('is case-insensitive', async () => {
    const t = await tenant();
    const m = await text(t.conversation, 'Your APPOINTMENT is Confirmed for Friday');
    await text(t.conversation, 'Something else entirely');
    expect(idsOf(await search(t, 'appointment is confirmed'))).toEqual([m.id]);
    expect(idsOf(await search(t, 'FRIDAY'))).toEqual([m.id]);
    expect(idsOf(await getPage(t, businessUrl(t, 'search_term=aPpOiNtMeNt')))).toEqual([m.id]);
  });

  it('answers exactly what ILIKE on the messages answers, whatever the shape, for terms in other alphabets and cases too', async () => {
    // The business-wide shapes compare folded texts (message_search) with LIKE; the conversation
    // shape and the definition (docs/api.md#search) use ILIKE on the messages themselves.
    const t = await tenant();
    const texts = [
      'ÉTÉ à Paris: Crème Brûlée',
      'été en été',
      'STRASSE und Straße',
      'ΣΊΣΥΦΟΣ ο Σίσυφος',
      'İstanbul ve IŞIK ışık',
      'ÅNGSTRÖM Ångström',
      'Kelvin 5K and 5K sign',
      '日本語のメッセージ',
      'Spring sale: 100% off, 1000 points',
      'tag a_b and axb, saved in C:\\new\\dir and C:new',
      'emoji 🎉 PARTY 🎉',
      'mixed CaSe ǅemal',
    ];
    for (const [i, content] of texts.entries()) await text(t.conversation, content, at(100 - i));
    await email(t.conversation, 'ÜBER Größe', 'body', at(1));
    const terms = [
      'été',
      'ÉTÉ',
      'crème brûlée',
      'straße',
      'STRASSE',
      'σίσυφος',
      'ΣΊΣΥΦΟΣ',
      'ıșı',
      'işık',
      'IŞIK',
      'istanbul',
      'İstanbul',
      'ångström',
      '5k ',
      'メッセージ',
      '🎉 party',
      'ǆemal',
      'ǅEMAL',
      'über größe',
      'GRÖSSE',
      // LIKE's wildcards and escape, literal here (the walk tests with strpos, the others with LIKE).
      '100%',
      'a_b',
      'C:\\new',
    ];
    for (const term of terms) {
      const pattern = `%${escapeLike(term)}%`;
      const expected = (
        await db.execute<{
          id: string;
        }>(sql`select id from messages where business_id = ${t.business.id} and message_type <> 'NOTE'
          and (content ilike ${pattern} or subject ilike ${pattern}) order by sent_at desc, id desc`)
      ).map((r) => Number(r.id));
      const q = { businessId: t.business.id, term, limit: 25, offset: 0 };
      for (const shape of ['walk', 'bitmap'] as const) {
        const [row] = await db.execute<{ ids: string[] }>(matchQuery({ ...q, walkRows: 100 }, shape));
        expect(row!.ids.map(Number), `${term} (${shape})`).toEqual(expected);
      }
      const [inConversation] = await db.execute<{ ids: string[] }>(
        matchQuery({ ...q, conversationId: t.conversation.id }, 'conversation'),
      );
      expect(inConversation!.ids.map(Number), `${term} (conversation)`).toEqual(expected);
    }
    // Not vacuous: most terms match something.
    expect(idsOf(await search(t, 'ÉTÉ'))).toHaveLength(2);
    expect(idsOf(await search(t, 'über größe'))).toHaveLength(1);
    expect(idsOf(await search(t, 'a_b'))).toHaveLength(1);
  });

  it('matches an email by its subject alone, and by its body', async () => {
    const t = await tenant();
    const mail = await email(t.conversation, 'Invoice for March', 'Please find the document attached.');
    await text(t.conversation, 'unrelated text');
    const bySubject = await getPage(t, businessUrl(t, 'search_term=invoice'));
    expect(idsOf(bySubject)).toEqual([mail.id]);
    expect(bySubject.messages[0]).toMatchObject({ message_type: 'EMAIL', subject: 'Invoice for March', channel: 'email' });
    expect(idsOf(await search(t, 'for march', { conversationId: t.conversation.id }))).toEqual([mail.id]);
    expect(idsOf(await search(t, 'document attached'))).toEqual([mail.id]);
  });

  it('orders newest first, ties on sent_at broken by id descending', async () => {
    const t = await tenant();
    const other = await anotherConversation(t);
    const tie = at(30);
    // Inserted so that id order and sent_at order disagree.
    const newest = await text(t.conversation, 'order check newest', at(5));
    const oldest = await text(other, 'order check oldest', at(60));
    const tieA = await text(t.conversation, 'order check tie A', tie);
    const tieB = await text(other, 'order check tie B', tie);
    const tieC = await text(t.conversation, 'order check tie C', tie);
    const expected = [newest.id, tieC.id, tieB.id, tieA.id, oldest.id];
    expect(idsOf(await search(t, 'order check'))).toEqual(expected);
    expect(idsOf(await getPage(t, businessUrl(t, 'search_term=order+check')))).toEqual(expected);
    // Pages of 2 cut through the tie: which rows land on which page follows the same order.
    const paged = [];
    for (const page of [1, 2, 3]) paged.push(idsOf(await search(t, 'order check', { page, pageSize: 2 })));
    expect(paged).toEqual([expected.slice(0, 2), expected.slice(2, 4), expected.slice(4)]);
    expect(idsOf(await getPage(t, conversationUrl(t, t.conversation.id, 'search_term=order+check')))).toEqual([
      newest.id,
      tieC.id,
      tieA.id,
    ]);
  });
});

describe('pagination', () => {
  it('pages through the matches with exact totals; a page past the end is empty with next_page false', async () => {
    const t = await tenant();
    const made = [];
    for (let i = 0; i < 7; i++) made.push(await text(t.conversation, `paged item ${i}`, at(100 - i)));
    await text(t.conversation, 'not a match');
    const expected = made.map((m) => m.id).reverse();

    const pages = [];
    for (const page of [1, 2, 3, 4]) pages.push(await getPage(t, businessUrl(t, `search_term=paged&page=${page}&page_size=3`)));
    expect(pages.map((p) => [p.page, p.page_size, p.total_messages, p.next_page, p.messages.length])).toEqual([
      [1, 3, 7, true, 3],
      [2, 3, 7, true, 3],
      [3, 3, 7, false, 1],
      [4, 3, 7, false, 0],
    ]);
    expect(pages.flatMap(idsOf)).toEqual(expected);

    // Exactly full last page: next_page false.
    const exact = await search(t, 'paged', { page: 1, pageSize: 7 });
    expect([exact.total_messages, exact.next_page, exact.messages.length]).toEqual([7, false, 7]);
    // Far past the end, conversation variant.
    const far = await getPage(t, conversationUrl(t, t.conversation.id, 'search_term=paged&page=50&page_size=100'));
    expect(far).toMatchObject({ messages: [], total_messages: 7, next_page: false, page: 50, page_size: 100 });
    // Defaults, and the page_size bound.
    expect(await getPage(t, businessUrl(t, 'search_term=paged'))).toMatchObject({
      page: 1,
      page_size: 25,
      total_messages: 7,
      next_page: false,
    });
    expect((await api.get(businessUrl(t, 'search_term=paged&page_size=101'), { headers: t.headers })).status).toBe(422);
    // No match at all.
    expect(await search(t, 'nothing like this')).toMatchObject({ messages: [], total_messages: 0, next_page: false });
  });
});

describe('scope', () => {
  it('the conversation variant returns only that conversation', async () => {
    const t = await tenant();
    const other = await anotherConversation(t);
    const mine = await text(t.conversation, 'scoped word here');
    await text(other, 'scoped word there');
    const page = await getPage(t, conversationUrl(t, t.conversation.id, 'search_term=scoped+word'));
    expect(idsOf(page)).toEqual([mine.id]);
    expect(page.total_messages).toBe(1);
    expect(page.messages[0]).toMatchObject({
      conversation_id: t.conversation.id,
      client_id: t.client.id,
      content: 'scoped word here',
    });
  });

  it("another business's conversation in the path is a 404 and its messages are never returned", async () => {
    const t = await tenant();
    const stranger = await tenant();
    await text(stranger.conversation, 'secret stranger text');
    await text(t.conversation, 'my own text');

    const res = await api.get(conversationUrl(t, stranger.conversation.id, 'search_term=secret'), { headers: t.headers });
    expect(res.status).toBe(404);
    expect(await jsonOf(res)).toEqual({ detail: 'Conversation not found' });
    const missing = await api.get(conversationUrl(t, 2_000_000_000, 'search_term=secret'), { headers: t.headers });
    expect(missing.status).toBe(404);
    const err = await rejection(search(t, 'secret', { conversationId: stranger.conversation.id }));
    expect(err.code).toBe('not_found');

    expect((await getPage(t, businessUrl(t, 'search_term=secret'))).total_messages).toBe(0);
    expect((await search(t, 'stranger', { includeNotes: true })).total_messages).toBe(0);
    // The stranger's own key finds it; ours cannot reach the stranger's business.
    expect((await getPage(stranger, businessUrl(stranger, 'search_term=secret'))).total_messages).toBe(1);
    expect((await api.get(businessUrl(stranger, 'search_term=secret'), { headers: t.headers })).status).toBe(403);
  });

  it("a conversation_id in the query that is not this business's is a 422 on query.conversation_id", async () => {
    const t = await tenant();
    const stranger = await tenant();
    await text(stranger.conversation, 'query scoped secret');
    for (const cid of [stranger.conversation.id, 2_000_000_000]) {
      const res = await api.get(businessUrl(t, `search_term=secret&conversation_id=${cid}`), { headers: t.headers });
      expect(res.status).toBe(422);
      expect((await jsonOf(res)).detail.map((d: { loc: unknown }) => d.loc)).toEqual([['query', 'conversation_id']]);
    }
    const bad = await api.get(businessUrl(t, 'search_term=secret&conversation_id=abc'), { headers: t.headers });
    expect(bad.status).toBe(422);
    expect((await jsonOf(bad)).detail[0].loc).toEqual(['query', 'conversation_id']);
    const err = await rejection(search(t, 'secret', { conversationId: stranger.conversation.id, conversationFrom: 'query' }));
    expect(err.extra.issues?.map((i) => i.loc)).toEqual([['query', 'conversation_id']]);
  });

  it('the second variant with its own conversation_id narrows to that conversation', async () => {
    const t = await tenant();
    const other = await anotherConversation(t);
    const mine = await text(t.conversation, 'narrowing term one');
    const theirs = await text(other, 'narrowing term two');
    expect(idsOf(await getPage(t, businessUrl(t, `search_term=narrowing&conversation_id=${other.id}`)))).toEqual([theirs.id]);
    expect(idsOf(await getPage(t, businessUrl(t, `search_term=narrowing&conversation_id=${t.conversation.id}`)))).toEqual([
      mine.id,
    ]);
  });

  it('without conversation_id, searches every conversation of the business and nothing of any other', async () => {
    const t = await tenant();
    const second = await anotherConversation(t);
    const third = await anotherConversation(t);
    const stranger = await tenant();
    const a = await text(t.conversation, 'widespread token A', at(3));
    const b = await text(second, 'widespread token B', at(2));
    const c = await email(third, 'widespread token C', 'body', at(1));
    await text(stranger.conversation, 'widespread token elsewhere', at(0));
    const page = await getPage(t, businessUrl(t, 'search_term=widespread+token'));
    expect(idsOf(page)).toEqual([c.id, b.id, a.id]);
    expect(page.total_messages).toBe(3);
    expect(new Set(page.messages.map((m) => m.conversation_id))).toEqual(new Set([t.conversation.id, second.id, third.id]));
  });
});

describe('notes', () => {
  it('are never returned by the REST search, and are returned by the service with includeNotes', async () => {
    const t = await tenant();
    const other = await anotherConversation(t);
    const message = await text(t.conversation, 'followup about the deposit', at(5));
    const staffNote = await note(t.conversation, 'internal followup: deposit not paid', at(1));
    const otherNote = await note(other, 'followup call later', at(2));

    expect(idsOf(await getPage(t, businessUrl(t, 'search_term=followup')))).toEqual([message.id]);
    expect(idsOf(await getPage(t, conversationUrl(t, t.conversation.id, 'search_term=followup')))).toEqual([message.id]);
    expect(idsOf(await getPage(t, businessUrl(t, `search_term=followup&conversation_id=${t.conversation.id}`)))).toEqual([
      message.id,
    ]);
    expect((await getPage(t, businessUrl(t, 'search_term=followup'))).total_messages).toBe(1);
    expect(idsOf(await search(t, 'followup'))).toEqual([message.id]);

    const withNotes = await search(t, 'followup', { includeNotes: true });
    expect(idsOf(withNotes)).toEqual([staffNote.id, otherNote.id, message.id]);
    expect(withNotes.total_messages).toBe(3);
    expect(withNotes.messages[0]).toMatchObject({ message_type: 'NOTE', channel: null });
    expect(idsOf(await search(t, 'followup', { includeNotes: true, conversationId: t.conversation.id }))).toEqual([
      staffNote.id,
      message.id,
    ]);
  });
});

/** `n` messages in `conversations` (round robin) whose content is `content(g)`, g = 1 newest … n oldest. */
async function bulkMessages(
  t: Tenant,
  conversations: Conversation[],
  n: number,
  content: SQL,
  extra: { type?: 'TEXT' | 'NOTE' } = {},
) {
  const note = extra.type === 'NOTE';
  await db.execute(sql`
    insert into messages (business_id, conversation_id, client_id, channel, direction, message_type, sender_type, content, status, origin, sent_at)
    select ${t.business.id},
           (${sql.param(conversations.map((c) => c.id))}::int[])[1 + g % ${conversations.length}],
           (${sql.param(conversations.map((c) => c.clientId))}::int[])[1 + g % ${conversations.length}],
           ${note ? null : 'sms'}, 'outbound', ${note ? 'NOTE' : 'TEXT'}, 'staff', ${content}, 'sent', ${note ? 'system' : 'send'}, now() - make_interval(secs => g)
    from generate_series(1, ${n}) g`);
}

/** The shape the search statement chose for `q` (the service runs the same statement). */
const shapeOf = async (q: Parameters<typeof searchQuery>[0]) => (await db.execute<{ shape: string }>(searchQuery(q)))[0]!.shape;

describe('searchable texts (message_search, kept by triggers on messages)', () => {
  type SearchRow = { xmin: string; content: string | null; subject: string | null; is_note: boolean; same_sent_at: boolean };
  const searchRow = async (messageId: number) =>
    (
      await db.execute<SearchRow>(
        sql`select s.xmin::text, s.content_lower as content, s.subject_lower as subject, s.is_note,
                   s.sent_at = (select m.sent_at from messages m where m.id = s.message_id) as same_sent_at
            from message_search s where s.message_id = ${messageId}`,
      )
    )[0];

  it('a message is found from its insert, after a content change, and not after it is deleted; status changes leave its text alone', async () => {
    const t = await tenant();
    const m = await text(t.conversation, 'The quokka party starts at noon');
    expect(idsOf(await search(t, 'quokka'))).toEqual([m.id]);
    const written = await searchRow(m.id);
    // Stored folded (lower()), with the message's sent_at.
    expect(written).toMatchObject({
      content: 'the quokka party starts at noon',
      subject: null,
      is_note: false,
      same_sent_at: true,
    });

    // A send's status changes (the worker's claim and result, a delivery callback) do not write the
    // text again: the row is the same row version (xmin) it was.
    for (const status of ['sending', 'sent', 'delivered'] as const) {
      await db.execute(
        sql`update messages set status = ${status}, status_updated_at = now(), provider_message_id = ${`SM${status}`} where id = ${m.id}`,
      );
    }
    expect((await searchRow(m.id))!.xmin).toBe(written!.xmin);

    await db.execute(sql`update messages set content = 'The wombat party starts at noon' where id = ${m.id}`);
    expect(idsOf(await search(t, 'wombat'))).toEqual([m.id]);
    expect(idsOf(await search(t, 'quokka'))).toEqual([]);

    await db.execute(sql`delete from messages where id = ${m.id}`);
    expect(await searchRow(m.id)).toBeUndefined();
    expect(idsOf(await search(t, 'wombat'))).toEqual([]);
  });

  it('every message of a bulk insert gets its text, an email its subject; a message without text has no row until it gets one', async () => {
    const t = await tenant();
    const mail = await email(t.conversation, 'Your platypus invoice', 'Attached.');
    const call = await createMessage(t.conversation, { channel: 'voice', messageType: 'CALL', content: null });
    expect(await searchRow(mail.id)).toMatchObject({ content: 'attached.', subject: 'your platypus invoice' });
    expect(idsOf(await search(t, 'platypus'))).toEqual([mail.id]);
    expect(await searchRow(call.id)).toBeUndefined();
    await db.execute(sql`update messages set content = 'Voicemail: call back about the echidna' where id = ${call.id}`);
    expect(idsOf(await search(t, 'echidna'))).toEqual([call.id]);
    expect(await searchRow(call.id)).toMatchObject({ content: 'voicemail: call back about the echidna', same_sent_at: true });
    // Losing both texts loses the row.
    await db.execute(sql`update messages set content = null where id = ${call.id}`);
    expect(await searchRow(call.id)).toBeUndefined();
  });

  it("a scheduled message's row follows its sent_at when it is sent, so the walk and the bitmap keep answering newest first; a note is marked", async () => {
    const t = await tenant();
    const older = await text(t.conversation, 'Kookaburra one', at(30));
    const later = await createMessage(t.conversation, { content: 'Kookaburra later', status: 'scheduled', sentAt: at(60) });
    const newer = await text(t.conversation, 'Kookaburra two', at(20));
    const staffNote = await note(t.conversation, 'Kookaburra note', at(25));
    expect(await searchRow(staffNote.id)).toMatchObject({ is_note: true });
    const order = async () => {
      const q = { businessId: t.business.id, term: 'kookaburra', limit: 25, offset: 0 };
      const walk = (await db.execute<{ ids: string[] }>(matchQuery({ ...q, walkRows: 100 }, 'walk')))[0]!.ids.map(Number);
      const bitmap = (await db.execute<{ ids: string[] }>(matchQuery(q, 'bitmap')))[0]!.ids.map(Number);
      expect(walk).toEqual(bitmap);
      expect(idsOf(await search(t, 'kookaburra'))).toEqual(walk);
      return walk;
    };
    expect(await order()).toEqual([newer.id, older.id, later.id]);
    // The worker's claim of a scheduled message stamps it with the moment it is sent (lifecycle.ts).
    const before = (await searchRow(older.id))!.xmin;
    await db.execute(sql`update messages set status = 'sending', sent_at = now() where id = ${later.id}`);
    expect(await searchRow(later.id)).toMatchObject({ same_sent_at: true });
    expect(await order()).toEqual([later.id, newer.id, older.id]);
    // Other rows untouched.
    expect((await searchRow(older.id))!.xmin).toBe(before);
  });
});

describe("the search indexes' pending lists (merged by the worker, not by a bulk insert)", () => {
  it('new texts wait in the pending list, found by search; the merge empties it and they are still found', async () => {
    const t = await tenant();
    // Only this test merges: autovacuum would too.
    await db.execute(sql`alter table message_search set (autovacuum_enabled = false)`);
    await bulkMessages(t, [t.conversation], 200, sql`'Pending lyrebird number ' || g`);
    expect(await pendingSearchPages()).toBeGreaterThan(0);
    expect((await search(t, 'lyrebird')).total_messages).toBe(200);
    expect(await mergeSearchIndexPendingLists()).toBeGreaterThan(0);
    expect(await pendingSearchPages()).toBe(0);
    expect(await mergeSearchIndexPendingLists()).toBe(0);
    expect((await search(t, 'lyrebird')).total_messages).toBe(200);
    await db.execute(sql`alter table message_search reset (autovacuum_enabled)`);
  });

  it('an insert past PostgreSQL’s default 4 MB of pending entries leaves them pending: the request does not merge them (migration 0020)', async () => {
    const t = await tenant();
    await db.execute(sql`alter table message_search set (autovacuum_enabled = false)`);
    await mergeSearchIndexPendingLists();
    // ~130 distinct trigrams per text: 3,000 texts are well over 4 MB of pending entries.
    await bulkMessages(
      t,
      [t.conversation],
      3000,
      sql`'Pending ' || md5(g::text) || md5((-g)::text) || md5((g * 7)::text) || md5((g * 13)::text)`,
    );
    const fourMegabytesOfPages = (4 * 1024 * 1024) / 8192;
    expect(await pendingSearchPages()).toBeGreaterThan(fourMegabytesOfPages);
    expect(await mergeSearchIndexPendingLists()).toBeGreaterThan(fourMegabytesOfPages);
    expect(await search(t, 'pending')).toMatchObject({ total_messages: 1000, total_capped: true });
    await db.execute(sql`alter table message_search reset (autovacuum_enabled)`);
  });
});

describe('query plans (20,000 messages)', () => {
  it('business-wide: a rare term through the trigram indexes, a common one by walking the newest messages; one conversation: its own index', async () => {
    const t = await tenant();
    const conversations = [t.conversation];
    for (let i = 0; i < 19; i++) conversations.push(await anotherConversation(t));
    await bulkMessages(
      t,
      conversations,
      20000,
      sql`'Hello, your appointment number ' || g || ' is confirmed. See you soon! ' || md5(g::text) || case when g % 5000 = 17 then ' zebrafish' else '' end`,
    );
    // What autovacuum does in production: flushes the GIN pending lists of the bulk insert and
    // refreshes statistics. Right after a bulk load the trigram indexes carry stale metapage stats
    // and, on a table this small, a sequential scan is then costed cheaper.
    await db.execute(sql`vacuum analyze messages, message_search`);

    // The service's one statement, run: the probe decides and only the chosen branch executes.
    const analyze = async (q: Parameters<typeof searchQuery>[0]) =>
      (await db.execute<{ 'QUERY PLAN': string }>(sql`explain (analyze, costs off, timing off) ${searchQuery(q)}`))
        .map((r) => r['QUERY PLAN'])
        .join('\n');
    const rareQuery = { businessId: t.business.id, term: 'zebrafish', limit: 25, offset: 0 };
    expect(await shapeOf(rareQuery)).toBe('bitmap');
    const rarePlan = await analyze(rareQuery);
    expect(rarePlan).toMatch(/Bitmap Index Scan on message_search_content_trgm_idx \(actual rows=\d+/);
    expect(rarePlan).toMatch(/Bitmap Index Scan on message_search_subject_trgm_idx \(actual rows=\d+/);
    expect(rarePlan).toMatch(/WindowAgg \(never executed\)/);
    expect(rarePlan).not.toMatch(/Seq Scan|messages_conversation_sent_idx/);
    // As the pool runs it: without its values (server/db/client.ts), the term and business unknown.
    const generic = await genericPlan(searchQuery(rareQuery));
    if (generic !== null) {
      expect(generic).toMatch(/Bitmap Index Scan on message_search_content_trgm_idx/);
      expect(generic).toMatch(/Index Scan using message_search_business_sent_idx/);
      expect(generic).not.toMatch(/Seq Scan/);
    }

    const commonQuery = { businessId: t.business.id, term: 'appointment number', limit: 25, offset: 0 };
    expect(await shapeOf(commonQuery)).toBe('walk');
    const commonPlan = await analyze(commonQuery);
    expect(commonPlan).toMatch(/WindowAgg \(actual rows=\d+/);
    expect(commonPlan).toMatch(
      /Index Scan using message_search_business_sent_idx on message_search message_search_1 \(actual rows=\d+/,
    );
    expect(commonPlan).toMatch(/Bitmap Index Scan on message_search_content_trgm_idx \(never executed\)/);
    expect(commonPlan).not.toMatch(/Seq Scan|Sort Key: message_search/);

    const conversationQuery = { ...rareQuery, conversationId: t.conversation.id };
    expect(await shapeOf(conversationQuery)).toBe('conversation');
    const conversation = await analyze(conversationQuery);
    expect(conversation).toMatch(/messages_conversation_sent_idx/);
    expect(conversation).not.toMatch(/trgm_idx|message_search/);

    // And the answers are right on this data.
    const rare = await search(t, 'ZEBRAFISH', { pageSize: 100 });
    expect(rare).toMatchObject({ total_messages: 4, total_capped: false, next_page: false });
    expect(rare.messages.every((m) => m.content?.endsWith(' zebrafish'))).toBe(true);
    const sentAts = rare.messages.map((m) => m.sent_at);
    expect(sentAts).toEqual([...sentAts].sort().reverse());
    // 20,000 matches: the total is capped, the page is exact.
    const common = await search(t, 'appointment number', { page: 2, pageSize: 10 });
    expect(common).toMatchObject({ total_messages: SEARCH_TOTAL_CAP, total_capped: true, next_page: true });
    // g = 11..20 are the 11th to 20th newest.
    expect(common.messages.map((m) => m.content?.split(' ')[4])).toEqual([
      '11',
      '12',
      '13',
      '14',
      '15',
      '16',
      '17',
      '18',
      '19',
      '20',
    ]);
  });
});

describe('capped totals (SEARCH_TOTAL_CAP)', () => {
  it('exact up to the cap, the cap with total_capped past it; next_page exact and every page reachable, past the cap too', async () => {
    const t = await tenant();
    const other = await anotherConversation(t);
    // 1,000 'exactly' matches, 1,001 'onemore' matches, 1,230 'beyond' matches (g = 1 newest).
    await bulkMessages(
      t,
      [t.conversation, other],
      1230,
      sql`'row ' || g || ' beyond' || case when g <= 1000 then ' exactly' else '' end || case when g <= 1001 then ' onemore' else '' end`,
    );
    await db.execute(sql`vacuum analyze messages`);

    expect(await search(t, 'exactly')).toMatchObject({ total_messages: 1000, total_capped: false, next_page: true });
    expect(await search(t, 'onemore')).toMatchObject({ total_messages: 1000, total_capped: true, next_page: true });
    const first = await getPage(t, businessUrl(t, 'search_term=beyond&page_size=100'));
    expect(first).toMatchObject({ total_messages: 1000, total_capped: true, next_page: true, page: 1 });
    expect(first.messages.map((m) => m.content)).toEqual(
      Array.from({ length: 100 }, (_, i) => `row ${i + 1} beyond${i < 1000 ? ' exactly onemore' : ''}`),
    );
    // Page 13 of 100 (rows 1,201–1,230): past the cap, the last page.
    const last = await getPage(t, businessUrl(t, 'search_term=beyond&page=13&page_size=100'));
    expect(last).toMatchObject({ total_messages: 1000, total_capped: true, next_page: false });
    expect(last.messages.map((m) => m.content)).toEqual(Array.from({ length: 30 }, (_, i) => `row ${1201 + i} beyond`));
    expect((await search(t, 'beyond', { page: 14, pageSize: 100 })).messages).toEqual([]);
    // Page 12 ends at row 1,200: another page follows.
    expect((await search(t, 'beyond', { page: 12, pageSize: 100 })).next_page).toBe(true);
    // The conversation variant caps the same way (615 of the 1,230 are in this conversation).
    expect(await getPage(t, conversationUrl(t, t.conversation.id, 'search_term=beyond'))).toMatchObject({
      total_messages: 615,
      total_capped: false,
    });
  });

  it('the walk and the trigram bitmap answer the same rows in the same order, page by page, notes excluded unless asked', async () => {
    const t = await tenant();
    const conversations = [t.conversation, await anotherConversation(t), await anotherConversation(t)];
    // 3,000 messages: 'common' in two of three, 'sparse' in one of 97; ties on sent_at every 7 rows.
    await db.execute(sql`
      insert into messages (business_id, conversation_id, client_id, channel, direction, message_type, sender_type, content, status, origin, sent_at)
      select ${t.business.id}, (${sql.param(conversations.map((c) => c.id))}::int[])[1 + g % 3], (${sql.param(conversations.map((c) => c.clientId))}::int[])[1 + g % 3],
             case when g % 11 = 0 then null else 'sms' end, 'outbound', case when g % 11 = 0 then 'NOTE' else 'TEXT' end, 'staff',
             'msg ' || g || case when g % 3 <> 0 then ' common' else '' end || case when g % 97 = 0 then ' sparse' else '' end,
             'sent', 'send', now() - make_interval(secs => g - g % 7)
      from generate_series(1, 3000) g`);
    await db.execute(sql`vacuum analyze messages`);
    for (const term of ['common', 'sparse', 'msg 1']) {
      for (const includeNotes of [false, true]) {
        for (const [limit, offset] of [
          [25, 0],
          [25, 50],
          [100, 1900],
          [10, 2990],
        ] as const) {
          const q = { businessId: t.business.id, term, includeNotes, limit, offset };
          const walk = (
            await db.execute<{ n: number; complete: boolean; ids: string[] }>(matchQuery({ ...q, walkRows: 100_000 }, 'walk'))
          )[0]!;
          const bitmap = (await db.execute<{ n: number; complete: boolean; ids: string[] }>(matchQuery(q, 'bitmap')))[0]!;
          const label = `${term} notes=${includeNotes} ${limit}@${offset}`;
          expect(walk.ids, label).toEqual(bitmap.ids);
          // The walk stops once it has what the page and the capped total need; else it read everything.
          if (walk.complete) expect(walk.n, label).toBe(bitmap.n);
          else expect(walk.n, label).toBeGreaterThan(Math.max(SEARCH_TOTAL_CAP, offset + limit));
        }
      }
    }
  });

  it('a walk that runs out of its row budget says so, and the search then answers from the trigram indexes', async () => {
    const t = await tenant();
    // A term frequent among the newest messages and absent from the older ones ("trending").
    await bulkMessages(t, [t.conversation], 2000, sql`'msg ' || g || case when g <= 30 then ' trending' else '' end`);
    await db.execute(sql`vacuum analyze messages`);
    const q = { businessId: t.business.id, term: 'trending', limit: 25, offset: 0 };
    expect(await shapeOf(q)).toBe('walk');
    const [short] = await db.execute<{ n: number; complete: boolean }>(matchQuery({ ...q, walkRows: 500 }, 'walk'));
    expect(short).toMatchObject({ n: 30, complete: false });
    const [whole] = await db.execute<{ n: number; complete: boolean }>(matchQuery({ ...q, walkRows: 5000 }, 'walk'));
    expect(whole).toMatchObject({ n: 30, complete: true });
    // With a budget the walk exhausts, the search falls back to the trigram indexes: still exact.
    expect(await shapeOf({ ...q, walkRows: 500 })).toBe('bitmap');
    const fallback = await search(t, 'trending', { pageSize: 10, page: 3, walkRows: 500 });
    expect(fallback).toMatchObject({ total_messages: 30, total_capped: false, next_page: false });
    expect(fallback.messages.map((m) => m.content)).toEqual(Array.from({ length: 10 }, (_, i) => `msg ${21 + i} trending`));
    const page = await search(t, 'trending', { pageSize: 10, page: 3 });
    expect(page).toMatchObject({ total_messages: 30, total_capped: false, next_page: false });
    expect(page.messages.map((m) => m.content)).toEqual(Array.from({ length: 10 }, (_, i) => `msg ${21 + i} trending`));
  });
});
