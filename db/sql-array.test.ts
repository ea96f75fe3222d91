import { sql } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import { describe, expect, it } from 'vitest';
import { db } from '@/server/db/client';
import { equalsAny, textArray } from './sql-array';

const values = (query: ReturnType<typeof sql>) => new PgDialect().sqlToQuery(query);

describe('equalsAny', () => {
  it('binds a list of any length as one parameter, so the statement is the same for 3 values or 1,000', () => {
    const three = values(sql`select 1 where ${equalsAny(sql`x`, [1, 2, 3], 'int')}`);
    const thousand = values(
      sql`select 1 where ${equalsAny(
        sql`x`,
        Array.from({ length: 1000 }, (_, i) => i),
        'int',
      )}`,
    );
    expect(three.params).toHaveLength(1);
    expect(thousand.params).toHaveLength(1);
    expect(thousand.sql).toBe(three.sql);
  });

  it('matches the listed values, of each type, and nothing for an empty list', async () => {
    const matched = async (list: (string | number)[], type: 'int' | 'bigint' | 'text' | 'uuid', column: ReturnType<typeof sql>) =>
      [
        ...(await db.execute<{ v: string }>(
          sql`select v::text from ${column} where ${equalsAny(sql`v`, list, type)} order by 1`,
        )),
      ].map((r) => r.v);
    const ints = sql`(values (1), (2), (3)) as t(v)`;
    expect(await matched([3, 1, 9], 'int', ints)).toEqual(['1', '3']);
    expect(await matched([], 'int', ints)).toEqual([]);
    const bigints = sql`(values (9007199254740000::bigint), (2::bigint)) as t(v)`;
    expect(await matched([9007199254740000], 'bigint', bigints)).toEqual(['9007199254740000']);
    const texts = sql`(values ('a,b'), ('c"d'), ('{e}')) as t(v)`;
    // Array-literal punctuation inside a value is a value, not syntax.
    expect(await matched(['a,b', 'c"d', '{e}', 'a'], 'text', texts)).toEqual(['a,b', 'c"d', '{e}']);
    const uuids = sql`(values ('6f1c7e0a-0000-4000-8000-000000000001'::uuid)) as t(v)`;
    expect(await matched(['6f1c7e0a-0000-4000-8000-000000000001'], 'uuid', uuids)).toEqual([
      '6f1c7e0a-0000-4000-8000-000000000001',
    ]);
  });
});

describe('textArray: values as one text[] parameter, cast per column', () => {
  it('keeps NULLs (a leading one too), booleans, numbers and JSON through a cast per column', async () => {
    const rows = await db.execute<{ n: number | null; b: boolean | null; j: unknown }>(sql`
      select v.n::int as n, v.b::boolean as b, v.j::jsonb as j
      from unnest(${textArray([null, 7, -1])}, ${textArray([undefined, true, false])},
                  ${textArray([null, JSON.stringify({ a: [1, 'x'] }), '"s"'])}) as v(n, b, j)`);
    expect([...rows]).toEqual([
      { n: null, b: null, j: null },
      { n: 7, b: true, j: { a: [1, 'x'] } },
      { n: -1, b: false, j: 's' },
    ]);
  });
});
