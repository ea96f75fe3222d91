import { and, desc, eq, inArray, sql, type SQL } from 'drizzle-orm';
import { db, type Tx } from '@/db/client';
import { conversations, messages } from '@/db/schema';
import { AppError } from '@/server/errors';
import { selectMessageItems, toMessageItem } from './messages/serialize';

/** SPEC §8: a search term has at least 3 characters (shorter ones cannot use a trigram index). */
export const MIN_SEARCH_TERM_LENGTH = 3;
/** Not in the spec: bounds the work one request can ask of the trigram index. */
export const MAX_SEARCH_TERM_LENGTH = 200;

/** The term's 422 message, shared by the REST query schema and the service. */
export const SEARCH_TERM_TOO_SHORT = `must be at least ${MIN_SEARCH_TERM_LENGTH} characters`;

export type SearchMessagesInput = {
  businessId: number;
  /** Raw term; trimmed here. */
  term: string;
  /** Only this conversation (it must belong to the business). */
  conversationId?: number;
  /**
   * Where `conversationId` came from, which decides the error when it is not in this business
   * (SPEC §2): an id in the path is a 404 "Conversation not found", one in the query a 422 with
   * loc ['query', 'conversation_id']. Default 'path'.
   */
  conversationFrom?: 'path' | 'query';
  /** Also return internal notes (staff inbox over tRPC). The REST search never does (SPEC §6.1). */
  includeNotes?: boolean;
  page: number;
  pageSize: number;
};

/** `\`, `%` and `_` in a search term are literal: escaped for LIKE/ILIKE (whose escape character is `\`). */
export function escapeLike(term: string): string {
  return term.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** Trims the term; under 3 characters is a 422 on ['query', 'search_term']. */
export function normaliseSearchTerm(raw: string): string {
  const term = raw.trim();
  if (term.length < MIN_SEARCH_TERM_LENGTH) throw AppError.invalid(['query', 'search_term'], SEARCH_TERM_TOO_SHORT, 'too_small');
  if (term.length > MAX_SEARCH_TERM_LENGTH) {
    throw AppError.invalid(['query', 'search_term'], `must be at most ${MAX_SEARCH_TERM_LENGTH} characters`, 'too_big');
  }
  return term;
}

type MatchQuery = { businessId: number; term: string; conversationId?: number; includeNotes?: boolean; limit: number; offset: number };

/**
 * One statement answering `{ total, ids }`: the number of matches and the ids of one page, newest
 * first (sent_at desc, id desc).
 *
 * The matches are computed first, in a MATERIALIZED CTE that has no ORDER BY/LIMIT, so the planner
 * cannot fall into the trap of walking a time-ordered index and filtering row by row until it has a
 * page (fast for common terms, seconds for rare ones): across the business the CTE is a BitmapOr of
 * the two btree_gin trigram indexes (business_id, content) and (business_id, subject); within one
 * conversation it reads the conversation's rows through messages_conversation_sent_idx and filters
 * them. Sorting the (id, sent_at) pairs of the matches and counting them then costs little.
 * The count is exact: it is the size of the set the page needs anyway.
 *
 * Exported so tests can EXPLAIN exactly what the service runs.
 */
export function matchQuery(q: MatchQuery): SQL {
  const pattern = `%${escapeLike(q.term)}%`;
  // The pattern is a bound parameter; LIKE's default escape character is the backslash that
  // escapeLike uses, so no ESCAPE clause is needed.
  const matches = sql`(${messages.content} ilike ${pattern} or ${messages.subject} ilike ${pattern})`;
  const notes = q.includeNotes ? sql`` : sql` and ${messages.messageType} <> 'NOTE'`;
  const matched =
    q.conversationId === undefined
      ? sql`
        select ${messages.id} as id, ${messages.sentAt} as sent_at
        from ${messages}
        where ${messages.businessId} = ${q.businessId} and ${matches}${notes}`
      : // Within one conversation: its rows through the conversation index, then the filter. The
        // OFFSET 0 subquery is a fence (outer conditions are not pushed into it), so the ILIKE cannot
        // become a trigram index condition: a BitmapAnd with the business-wide trigram index would
        // cost, for a common term, in proportion to the business rather than the conversation.
        sql`
        select c.id, c.sent_at from (
          select ${messages.id} as id, ${messages.sentAt} as sent_at, ${messages.content} as content,
                 ${messages.subject} as subject, ${messages.messageType} as message_type
          from ${messages}
          where ${messages.conversationId} = ${q.conversationId} and ${messages.businessId} = ${q.businessId}
          offset 0
        ) c
        where (c.content ilike ${pattern} or c.subject ilike ${pattern})${q.includeNotes ? sql`` : sql` and c.message_type <> 'NOTE'`}`;
  return sql`
    with matched as materialized (${matched})
    select
      (select count(*) from matched)::int as total,
      coalesce(
        (select array_agg(p.id order by p.sent_at desc, p.id desc)
         from (select id, sent_at from matched order by sent_at desc, id desc limit ${q.limit} offset ${q.offset}) p),
        '{}'
      ) as ids`;
}

/**
 * SPEC §6.1 Search: case-insensitive substring match of the trimmed term (≥ 3 characters, LIKE
 * wildcards literal) on content and subject, newest first, paginated; across the whole business or
 * one conversation. Notes only with `includeNotes`.
 */
export async function searchMessages(input: SearchMessagesInput, tx: Tx = db) {
  const term = normaliseSearchTerm(input.term);
  const { businessId, conversationId, page, pageSize } = input;

  if (conversationId !== undefined) {
    const [found] = await tx
      .select({ id: conversations.id })
      .from(conversations)
      .where(and(eq(conversations.id, conversationId), eq(conversations.businessId, businessId)));
    if (!found) {
      if (input.conversationFrom === 'query') {
        throw AppError.invalid(['query', 'conversation_id'], `Conversation ${conversationId} not found in this business`);
      }
      throw AppError.notFound('Conversation');
    }
  }

  const [result] = await tx.execute<{ total: number; ids: (number | string)[] }>(
    matchQuery({ businessId, term, conversationId, includeNotes: input.includeNotes, limit: pageSize, offset: (page - 1) * pageSize }),
  );
  const total = Number(result?.total ?? 0);
  const ids = (result?.ids ?? []).map(Number);

  const rows = ids.length
    ? await selectMessageItems(tx)
        .where(and(eq(messages.businessId, businessId), inArray(messages.id, ids)))
        .orderBy(desc(messages.sentAt), desc(messages.id))
    : [];

  return {
    messages: rows.map(toMessageItem),
    total_messages: total,
    page,
    page_size: pageSize,
    next_page: page * pageSize < total,
  };
}
