import { sql, type SQL } from 'drizzle-orm';
import { db, type Tx } from '@/server/db/client';
import { fixedStatement } from '@/server/db/prepared';
import { conversations, messages, messageSearch } from '@/db/schema';
import { AppError } from '@/server/errors';
import { escapeLike } from '@/server/lib/pg-text';
import { normalizePhone } from '@/server/lib/phone';
import { typedPhoneDigits } from '@/server/shared/typed-phone';
import { MIN_SEARCH_TERM_LENGTH, SEARCH_TERM_TOO_SHORT } from '@/server/schemas/common';
import { MAX_SEARCH_TERM_LENGTH } from '@/server/shared/limits';
import { SEARCH_TOTAL_CAP } from '@/server/schemas/messages';
import { messageItemsJson, type MessageItemOut } from './messages/serialize';

export type SearchMessagesInput = {
  businessId: number;
  /** Raw term; trimmed here. */
  term: string;
  /** Only this conversation (it must belong to the business). */
  conversationId?: number;
  /**
   * Where `conversationId` came from, which decides the error when it is not in this business
   * (docs/api.md#conventions): an id in the path is a 404 "Conversation not found", one in the query a 422 with
   * loc ['query', 'conversation_id']. Default 'path'.
   */
  conversationFrom?: 'path' | 'query';
  /** Also return internal notes (staff inbox over tRPC). The REST search never does (docs/api.md#search). */
  includeNotes?: boolean;
  page: number;
  pageSize: number;
  /** Tests only: the business-wide walk's row budget (see MatchQuery.walkRows). */
  walkRows?: number;
};

/** Trims the term; under 3 characters is a 422 on ['query', 'search_term']. */
export function normaliseSearchTerm(raw: string): string {
  const term = raw.trim();
  if (term.length < MIN_SEARCH_TERM_LENGTH) throw AppError.invalid(['query', 'search_term'], SEARCH_TERM_TOO_SHORT, 'too_small');
  if (term.length > MAX_SEARCH_TERM_LENGTH) {
    throw AppError.invalid(['query', 'search_term'], `must be at most ${MAX_SEARCH_TERM_LENGTH} characters`, 'too_big');
  }
  return term;
}

// Totals are counted up to SEARCH_TOTAL_CAP matches (server/schemas/messages.ts): an exact count of
// a common term costs in proportion to its matches, of which a large business has tens of thousands.

/** Newest texts of the business the probe looks at to tell a common term from a rare one. */
const PROBE_ROWS = 500;
/**
 * Probe hits (of PROBE_ROWS) from which the term counts as common: 4%. At 4% the walk to the cap's
 * 1,001 matches reads ~25,000 texts, about what the trigram bitmap costs there (index scan, then a
 * recheck per match): the break-even.
 */
const COMMON_PROBE_HITS = 20;
/** The time-ordered walk gives up after this many rows per match it needs (below 4% of matches). */
const WALK_ROWS_PER_MATCH = 25;

type MatchQuery = {
  businessId: number;
  term: string;
  conversationId?: number;
  includeNotes?: boolean;
  limit: number;
  offset: number;
  /** Rows the walk may read before giving up (default: WALK_ROWS_PER_MATCH per match it needs). */
  walkRows?: number;
};

/**
 * How the matches are found (all answer the same rows in the same order):
 * - `conversation`: one conversation's rows through messages_conversation_sent_idx, filtered.
 * - `bitmap`: the business's matches through the trigram indexes of message_search (a BitmapOr of
 *   the btree_gin (business_id, content_lower) and (business_id, subject_lower) indexes), then
 *   sorted: fast for rare terms, in proportion to the matches for common ones.
 * - `walk`: the business's texts newest first through message_search_business_sent_idx, filtered,
 *   stopping once it has the page and SEARCH_TOTAL_CAP + 1 matches: fast for common terms, and
 *   for a rare term it would read the whole business — the planner trap of docs/architecture.md#search-plans, which
 *   is why the shape is chosen by the statement (searchQuery), not left to the planner's estimates.
 */
export type SearchShape = 'conversation' | 'bitmap' | 'walk';

/**
 * What a search statement binds, derived from a MatchQuery (valuesOf). The builders below only
 * interpolate these, so the statement can be rendered once per form with drizzle placeholders
 * (server/db/prepared.ts fixedStatement): rendering its dozens of fragments on every request showed in
 * bench:inbox's CPU profile.
 */
type SearchValues = {
  businessId: number;
  /** 0 across the business (not bound there). */
  conversationId: number;
  /** The LIKE pattern of the term: `%term%`, wildcards escaped. */
  pattern: string;
  /** The term itself, for the substring tests that need no index (strpos). */
  term: string;
  limit: number;
  offset: number;
  need: number;
  budget: number;
};
/** The values as the builders see them: numbers and strings, or placeholders standing for them. */
type Bound = { [K in keyof SearchValues]: unknown };
/** What changes the statement's text. */
type Form = { scope: 'conversation' | 'business'; includeNotes: boolean };

const formOf = (q: MatchQuery): Form => ({
  scope: q.conversationId === undefined ? 'business' : 'conversation',
  includeNotes: q.includeNotes ?? false,
});

/** Matches needed to answer a page and the capped total: the page, one more (next_page), the cap + 1. */
const needed = (q: MatchQuery) => Math.max(SEARCH_TOTAL_CAP + 1, q.offset + q.limit + 1);

function valuesOf(q: MatchQuery): SearchValues {
  const need = needed(q);
  return {
    businessId: q.businessId,
    conversationId: q.conversationId ?? 0,
    pattern: `%${escapeLike(q.term)}%`,
    term: q.term,
    limit: q.limit,
    offset: q.offset,
    need,
    budget: q.walkRows ?? need * WALK_ROWS_PER_MATCH,
  };
}

/**
 * The match on one conversation's messages (aliased `m`): ILIKE, as docs/api.md#search defines it.
 * The pattern is a bound parameter; LIKE's escape is `\`.
 */
function matchesMessage(v: Bound, f: Form): SQL {
  const notes = f.includeNotes ? sql`` : sql` and m.message_type <> 'NOTE'`;
  return sql`(m.content ilike ${v.pattern} or m.subject ilike ${v.pattern})${notes}`;
}

/**
 * The same match on message_search rows (aliased `s`), whose texts are stored folded: ILIKE folds
 * text and pattern with lower() and compares them with LIKE, so LIKE against lower(pattern) answers
 * the same rows without folding each row again. lower() runs once per statement (an InitPlan).
 * `scan`: rows read one by one (the probe, the walk), where no index is used and strpos(), the
 * same test on the lowered term, costs less per row than LIKE's matcher (the common-term walk tests
 * thousands of rows); otherwise LIKE, which the trigram indexes serve.
 */
function matchesText(v: Bound, f: Form, scan = false): SQL {
  const notes = f.includeNotes ? sql`` : sql` and not s.is_note`;
  if (scan) {
    const folded = sql`(select lower(${v.term}::text))`;
    return sql`(strpos(s.content_lower, ${folded}) > 0 or strpos(s.subject_lower, ${folded}) > 0)${notes}`;
  }
  const folded = sql`(select lower(${v.pattern}::text))`;
  return sql`(s.content_lower like ${folded} or s.subject_lower like ${folded})${notes}`;
}

/** The business's texts newest first (message_search_business_sent_idx), at most `limit`. */
const newestTexts = (v: Bound, limit: unknown, numbered: boolean) => sql`
  select ${messageSearch.messageId} as message_id, ${messageSearch.contentLower} as content_lower,
         ${messageSearch.subjectLower} as subject_lower, ${messageSearch.isNote} as is_note
         ${numbered ? sql`, row_number() over (order by ${messageSearch.sentAt} desc nulls last, ${messageSearch.messageId} desc nulls last) as k` : sql``}
  from ${messageSearch} where ${messageSearch.businessId} = ${v.businessId}
  order by ${messageSearch.sentAt} desc nulls last, ${messageSearch.messageId} desc nulls last
  limit ${limit}`;

/** Matches among the business's PROBE_ROWS newest texts (one short index walk). */
const probeQuery = (v: Bound, f: Form): SQL =>
  sql`select count(*) filter (where ${matchesText(v, f, true)})::int as hits from (${newestTexts(v, PROBE_ROWS, false)}) s`;

/** One row: how many matches were found, whether that is all of them, and the page's ids in order. */
type MatchRow = { found: boolean; n: number; complete: boolean; ids: (number | string)[] };

/**
 * A query answering MatchRow for a shape. `n` is exact when `complete`; the walk stops at
 * needed(q) matches (then n ≥ needed and the total is capped anyway) or when it has read its row
 * budget (n < needed, not complete: searchQuery then asks the bitmap). `found` is false only for a
 * conversation that is not in the business. Exported for tests, which compare the shapes' answers.
 */
export const matchQuery = (q: MatchQuery, shape: SearchShape): SQL => matchStatement(valuesOf(q), formOf(q), shape);

function matchStatement(v: Bound, f: Form, shape: SearchShape): SQL {
  // The page's first and last match (1-based).
  const page = sql`[${v.offset}::int + 1 : ${v.offset}::int + ${v.limit}::int]`;
  if (shape === 'walk') {
    // The walk numbers its rows (k); the row at k = budget is kept even when it does not match, so
    // the answer tells "ran out of budget" (look again with the bitmap) from "read the whole business".
    return sql`
      select true as found, count(*) filter (where h.hit)::int as n,
        not coalesce(bool_or(h.k = ${v.budget}), false) and count(*) filter (where h.hit) < ${v.need} as complete,
        coalesce((array_agg(h.id order by h.k) filter (where h.hit))${page}, '{}') as ids
      from (
        select w.id, w.k, w.hit from (
          select s.message_id as id, s.k, ${matchesText(v, f, true)} as hit
          from (${newestTexts(v, v.budget, true)}) s
          offset 0
        ) w
        where w.hit or w.k = ${v.budget}
        limit ${v.need}::int + 1
      ) h`;
  }
  const matched =
    shape === 'bitmap'
      ? sql`select s.message_id as id, s.sent_at from ${messageSearch} s
            where s.business_id = ${v.businessId} and ${matchesText(v, f)}`
      : // The conversation's rows through its index (the id comes from a lookup that also checks the
        // business, so another business's conversation reads nothing). The OFFSET 0 fence keeps the
        // ILIKE out of the scan: as an index condition it would become a BitmapAnd with the
        // business-wide trigram indexes, costing in proportion to the business, not the conversation.
        sql`select m.id, m.sent_at from (
          select ${messages.id} as id, ${messages.sentAt} as sent_at, ${messages.content} as content,
                 ${messages.subject} as subject, ${messages.messageType} as message_type
          from ${messages}
          where ${messages.conversationId} = (select ${conversations.id} from ${conversations}
                                              where ${conversations.id} = ${v.conversationId} and ${conversations.businessId} = ${v.businessId})
          offset 0
        ) m where ${matchesMessage(v, f)}`;
  const found =
    shape === 'bitmap'
      ? sql`true`
      : sql`exists (select 1 from ${conversations} where ${conversations.id} = ${v.conversationId} and ${conversations.businessId} = ${v.businessId})`;
  return sql`
    with matched as materialized (${matched})
    select ${found} as found, (select count(*) from matched)::int as n, true as complete,
      coalesce(
        (select array_agg(p.id order by p.sent_at desc, p.id desc)
         from (select id, sent_at from matched order by sent_at desc, id desc limit ${v.limit} offset ${v.offset}) p),
        '{}'
      ) as ids`;
}

/** What the search statement answers: the shape that answered, its MatchRow, the page as JSON. */
type SearchRow = MatchRow & { shape: SearchShape; items: string };

/**
 * The whole search in one statement, so one round trip (under load a round trip more costs about
 * as much as the rest of an inbox read: docs/architecture.md#search-plans). Within a conversation: its match. Across the
 * business: the probe decides, in PostgreSQL, between the walk (a term in at least COMMON_PROBE_HITS
 * of the PROBE_ROWS newest texts) and the trigram bitmap, which also answers when the walk ran out
 * of its row budget. Each branch is gated by a condition on the probe or the walk (an InitPlan):
 * PostgreSQL does not run the branch whose condition is false. Then the page's messages as JSON.
 *
 * Exported so tests and bench:inbox can run and EXPLAIN exactly what the service runs.
 */
export const searchQuery = (q: MatchQuery): SQL => searchStatement(valuesOf(q), formOf(q));

function searchStatement(v: Bound, f: Form): SQL {
  const items = messageItemsJson(
    sql`select id, sent_at from messages where business_id = ${v.businessId} and id = any(r.ids::bigint[])`,
  );
  if (f.scope === 'conversation') {
    return sql`select 'conversation' as shape, r.found, r.n, r.complete, r.ids, ${items} as items
      from (${matchStatement(v, f, 'conversation')}) r`;
  }
  // OFFSET 0 keeps each gate above its branch (not pushed into the aggregate, where it would filter
  // the aggregate's one row after computing it).
  return sql`
    with probe as materialized (${probeQuery(v, f)}),
    walk as materialized (
      select w.* from (${matchStatement(v, f, 'walk')} offset 0) w
      where (select hits from probe) >= ${COMMON_PROBE_HITS}
    ),
    bitmap as materialized (
      select b.* from (${matchStatement(v, f, 'bitmap')} offset 0) b
      where not coalesce((select w.complete or w.n >= ${v.need} from walk w), false)
    )
    select r.shape, r.found, r.n, r.complete, r.ids, ${items} as items
    from (select 'walk' as shape, * from walk where complete or n >= ${v.need}
          union all
          select 'bitmap', * from bitmap) r`;
}

/**
 * Rendered once per form (scope, notes) and run as a prepared statement (server/db/prepared.ts) outside a
 * transaction: its plan depends on neither the term nor the business (generic plans on the pool's
 * connections, server/db/client.ts: search.test.ts checks that plan).
 */
const searchStatementOnce = fixedStatement<SearchValues>((p, key) => searchStatement(p, JSON.parse(key) as Form));

async function runSearch(q: MatchQuery, tx: Tx): Promise<SearchRow> {
  const [row] = await searchStatementOnce<SearchRow>(valuesOf(q), JSON.stringify(formOf(q)), tx);
  return row!;
}

/**
 * docs/api.md#search: case-insensitive substring match of the trimmed term (≥ 3 characters, LIKE
 * wildcards literal) on content and subject, newest first, paginated; across the whole business or
 * one conversation. Notes only with `includeNotes`. The total is exact up to SEARCH_TOTAL_CAP;
 * past it `total_messages` is the cap and `total_capped` true. `next_page` is always exact.
 * As JSON text (the REST answer): the page's messages come from PostgreSQL as one JSON array.
 */
export async function searchMessagesJson(input: SearchMessagesInput, tx: Tx = db): Promise<string> {
  const { items, ...rest } = await searchPage(input, tx);
  return `{"messages":${items},${JSON.stringify(rest).slice(1)}`;
}

/** The same search as objects (the inbox's tRPC procedure). */
export async function searchMessages(input: SearchMessagesInput, tx: Tx = db) {
  const { items, ...rest } = await searchPage(input, tx);
  return { messages: JSON.parse(items) as MessageItemOut[], ...rest };
}

async function searchPage(input: SearchMessagesInput, tx: Tx) {
  const term = normaliseSearchTerm(input.term);
  const { businessId, conversationId, page, pageSize } = input;
  const q: MatchQuery = {
    businessId,
    term,
    conversationId,
    includeNotes: input.includeNotes,
    limit: pageSize,
    offset: (page - 1) * pageSize,
    walkRows: input.walkRows,
  };

  const result = await runSearch(q, tx);
  if (!result.found) {
    if (input.conversationFrom === 'query') {
      throw AppError.invalid(['query', 'conversation_id'], `Conversation ${conversationId} not found in this business`);
    }
    throw AppError.notFound('Conversation');
  }
  const n = Number(result.n);
  return {
    items: result.items,
    total_messages: Math.min(n, SEARCH_TOTAL_CAP),
    total_capped: n > SEARCH_TOTAL_CAP,
    page,
    page_size: pageSize,
    next_page: n > q.offset + q.limit,
  };
}

/** The trigram indexes of message_search (migration 0017): GIN indexes with pending lists. */
export const SEARCH_GIN_INDEXES = ['message_search_content_trgm_idx', 'message_search_subject_trgm_idx'];

/**
 * Moves the search indexes' pending entries into their trees (docs/architecture.md#search-texts),
 * off the request path. A GIN index takes new entries into a pending list first, and whichever
 * insert finds that list over `gin_pending_list_limit` merges all of it before it returns: at the
 * default 4 MB (about three 1,000-SMS requests), that slowed one bulk request in three. The
 * indexes hold 16 MB (SEARCH_PENDING_LIST_KB) and the worker calls this every second, so writers do
 * not find the list full and searches scan a short one.
 * Returns the pending pages merged.
 */
export async function mergeSearchIndexPendingLists(tx: Tx = db): Promise<number> {
  const [row] = await tx.execute<{ pages: string }>(sql`
    select coalesce(sum(gin_clean_pending_list(i::regclass)), 0) as pages
    from unnest(${sql.param(SEARCH_GIN_INDEXES)}::text[]) i`);
  return Number(row!.pages);
}

/* ----------------------------------------------------------------------------------------------
 * Clients: one rule for every client search (docs/api.md#client-search)
 * -------------------------------------------------------------------------------------------- */

/** A client search term as clientMatches reads it. */
export type ClientSearchTerm = {
  /** The LIKE pattern on the client's search text: the term, or the digits of a number typed as one. */
  pattern: string;
  /** The whole term read as a number in the business's country (E.164), or null when it is none. */
  phone: string | null;
  /** The LIKE pattern of a name that starts with the term (the lookup ranks those first). */
  prefix: string;
};

/**
 * Reads a trimmed term (3 to 100 characters: the callers' schemas check it). A term of digits and
 * phone punctuation with at least 3 digits (`0175`, `555-0175`, `(415) 555-0175`) matches the
 * digits of the client's number: stored numbers are E.164, so the typed digits are a substring of
 * the number whatever its punctuation. The whole term is also read as a number in the business's
 * country, which finds a number typed in national form with a trunk prefix (`07700 900123`).
 */
export function clientSearchTerm(term: string, country: string): ClientSearchTerm {
  const digits = typedPhoneDigits(term);
  return {
    pattern: `%${escapeLike(digits ?? term)}%`,
    phone: normalizePhone(term, country),
    prefix: `${escapeLike(term)}%`,
  };
}

/**
 * The client's search text: name, email and number in one string, exactly the expression that the
 * trigram index clients_business_search_trgm_idx holds after business_id (migration 0032). Numbers
 * are stored E.164, so it holds their digits too: a number typed in part is searched by its digits
 * through the same index. Exported for the test that the index serves it.
 */
export const clientSearchText = (cl: string) =>
  sql.raw(`(coalesce(${cl}.name, '') || ' ' || coalesce(${cl}.email, '') || ' ' || coalesce(${cl}.phone_number, ''))`);

/**
 * The clients (aliased `cl`) of the business that a term finds: a case-insensitive substring of
 * name, email or number (LIKE wildcards literal), or the number the term is. Tenancy is part of
 * the condition, which is what lets the (business_id, search text) index serve it, and the number
 * through clients_business_phone_idx (docs/architecture.md#client-search).
 */
export function clientMatches(cl: string, businessId: unknown, t: ClientSearchTerm): SQL {
  const business = sql`${sql.raw(`${cl}.business_id`)} = ${businessId}`;
  const text = sql`${clientSearchText(cl)} ilike ${t.pattern}`;
  if (!t.phone) return sql`${business} and ${text}`;
  return sql`${business} and (${text} or ${sql.raw(`${cl}.phone_number`)} = ${t.phone})`;
}
