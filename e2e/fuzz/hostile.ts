import fc from 'fast-check';

/**
 * Mutations that break exactly one rule of an otherwise valid request, as Schemathesis's negative
 * testing does: one path parameter, query parameter or body field gets a hostile value, loses its
 * place (a required field removed), or gains nesting; or the body as a whole is not what was
 * declared. The values are the classes the hostile-input issue names.
 */
const deepArray = (depth: number): unknown => {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = [v];
  return v;
};

const HOSTILE_VALUES: readonly unknown[] = [
  // integers at and past PostgreSQL integer, and other numbers no id can be
  2147483647,
  2147483648,
  -2147483649,
  0,
  -1,
  1.5,
  9007199254740993,
  1e308,
  // ids spelled otherwise: digits as a JSON string, a list of one, and path spellings that are no positive integer
  '1',
  [3],
  '01',
  '-4',
  '1e3',
  ' 1',
  // dates that do not exist, or are no timestamps
  '2026-02-30T10:00:00Z',
  '2026-11-20T24:01:00Z',
  '2026-11-20T23:60:00Z',
  'next tuesday',
  '31/12/2026 10:00',
  '2099-12-01',
  // text PostgreSQL cannot store
  'a\u0000b',
  '\u0000',
  'x\ud800y',
  '\udfff',
  // sizes and shapes that cost a careless parser dearly
  'x'.repeat(200_000),
  `${' '.repeat(40_000)}!`,
  `${'a'.repeat(5_000)}@${'b'.repeat(5_000)}`,
  deepArray(3_000),
  // wrong types and empties
  '',
  null,
  true,
  {},
  [],
  { a: { b: { c: [1] } } },
  'not-an-email',
  '@@',
  '%_\\',
  "'; drop table messages; --",
];

export type Mutation = {
  where: number;
  what: 'value' | 'remove' | 'nest' | 'repeat' | 'body-not-json' | 'body-wrong-type';
  value: unknown;
};

export const mutationArb: fc.Arbitrary<Mutation> = fc.record({
  where: fc.nat(),
  what: fc.constantFrom('value', 'value', 'value', 'remove', 'nest', 'repeat', 'body-not-json', 'body-wrong-type'),
  value: fc.constantFrom(...HOSTILE_VALUES),
});

export type Parts = {
  params: Record<string, unknown>;
  query: Record<string, unknown>;
  body: unknown;
  rawBody?: string;
  contentType?: string;
  /** Where a value mutation put its value (documented-types.ts judges whether it must be refused). */
  mutated?: { at: PlaceAt; value: unknown };
};

/** A place in a request: a path or query parameter by name, or a body field by its path (array indexes as numbers). */
export type PlaceAt = { in: 'path' | 'query'; name: string } | { in: 'body'; path: (string | number)[] };

type Place = { at: PlaceAt; get: () => unknown; set: (v: unknown) => void; remove: () => void };

/** The places one can mutate: each path and query parameter, and every field of the JSON body. */
function places(parts: Parts): Place[] {
  const out: Place[] = [];
  for (const [where, bag] of [
    ['path', parts.params],
    ['query', parts.query],
  ] as const) {
    for (const key of Object.keys(bag))
      out.push({ at: { in: where, name: key }, get: () => bag[key], set: (v) => (bag[key] = v), remove: () => delete bag[key] });
  }
  const walk = (holder: Record<string, unknown> | unknown[], depth: number, path: (string | number)[]) => {
    if (depth > 6) return;
    for (const key of Object.keys(holder)) {
      const h = holder as Record<string, unknown>;
      const at = [...path, Array.isArray(holder) ? Number(key) : key];
      out.push({
        at: { in: 'body', path: at },
        get: () => h[key],
        set: (v) => (h[key] = v),
        remove: () => (Array.isArray(holder) ? holder.splice(Number(key), 1) : delete h[key]),
      });
      const child = h[key];
      if (child && typeof child === 'object') walk(child as Record<string, unknown>, depth + 1, at);
    }
  };
  if (parts.body && typeof parts.body === 'object') walk(parts.body as Record<string, unknown>, 0, []);
  return out;
}

/** Applies one mutation in place; answers what it did, for the failure report. */
export function mutate(parts: Parts, m: Mutation): string {
  if (m.what === 'body-not-json' && parts.body !== undefined) {
    parts.rawBody = '{"messages": [';
    return 'body: truncated JSON';
  }
  if (m.what === 'body-wrong-type' && parts.body !== undefined) {
    parts.contentType = 'text/plain';
    return 'body: declared text/plain';
  }
  const all = places(parts);
  if (all.length === 0) return 'none (nothing to mutate)';
  const place = all[m.where % all.length]!;
  switch (m.what) {
    case 'remove':
      place.remove();
      return 'a field removed';
    case 'nest':
      place.set([[place.get()]]);
      parts.mutated = { at: place.at, value: place.get() };
      return 'a field nested';
    case 'repeat':
      place.set(Array.from({ length: 5_000 }, () => place.get()));
      parts.mutated = { at: place.at, value: place.get() };
      return 'a field repeated 5,000 times';
    default:
      place.set(m.value);
      parts.mutated = { at: place.at, value: m.value };
      return `a field set to ${describeValue(m.value)}`;
  }
}

function describeValue(value: unknown): string {
  const text = typeof value === 'string' ? JSON.stringify(value) : (JSON.stringify(value) ?? String(value));
  return text.length > 80 ? `${text.slice(0, 60)}… (${text.length} chars)` : text;
}
