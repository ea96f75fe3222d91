import fc from 'fast-check';

/**
 * JSON Schema (as the OpenAPI 3.1 document states it) → a fast-check arbitrary of values the
 * schema accepts. Small on purpose: the keywords our document uses ($ref, anyOf/oneOf, enum,
 * const, type lists with null, string length and formats, integer and number ranges, arrays,
 * objects with required and optional properties). Sizes are kept small so a request stays cheap;
 * the hostile sizes come from the mutations (hostile.ts).
 *
 * `pools` maps a property or parameter name to values known to exist (ids returned by the
 * service, its phone numbers…): such a field draws from the pool most of the time, so valid
 * requests reach real rows instead of stopping at "not found". The pools may grow while a run
 * goes on.
 */
export type Schema = Record<string, unknown>;
export type Pools = Record<string, (string | number)[]>;

export class SchemaArbitraries {
  constructor(
    private readonly components: Record<string, Schema>,
    private readonly pools: Pools,
  ) {}

  resolve(schema: Schema): Schema {
    let s = schema;
    for (let i = 0; i < 20 && typeof s.$ref === 'string'; i++) s = this.components[(s.$ref as string).split('/').pop()!] ?? {};
    return s;
  }

  /** An arbitrary for `schema`; `name` is the property or parameter it belongs to (for pools). */
  of(schema: Schema, name?: string, depth = 0): fc.Arbitrary<unknown> {
    const s = this.resolve(schema);
    const pool = name ? this.pools[name] : undefined;
    const own = this.own(s, name, depth);
    if (!pool || pool.length === 0) return own;
    // Read at generation time: ids the service returns during the run join the pool (stateful
    // sequences: a conversation created by one request is worked by the next ones).
    const known = fc.nat().map((i) => pool[i % pool.length]!);
    return fc.oneof({ arbitrary: known, weight: 4 }, { arbitrary: own, weight: 1 });
  }

  private own(s: Schema, name: string | undefined, depth: number): fc.Arbitrary<unknown> {
    if (s.const !== undefined) return fc.constant(s.const);
    if (Array.isArray(s.enum)) return fc.constantFrom(...(s.enum as unknown[]));
    const alternatives = (s.anyOf ?? s.oneOf) as Schema[] | undefined;
    if (alternatives?.length) return fc.oneof(...alternatives.map((a) => this.of(a, name, depth)));
    const types = ([] as unknown[]).concat(s.type ?? (s.properties ? 'object' : []));
    const nonNull = types.filter((t) => t !== 'null');
    const value = nonNull.length ? fc.oneof(...nonNull.map((t) => this.ofType(t as string, s, name, depth))) : fc.constant(null);
    return types.includes('null') ? fc.option(value, { nil: null, freq: 5 }) : value;
  }

  private ofType(type: string, s: Schema, name: string | undefined, depth: number): fc.Arbitrary<unknown> {
    switch (type) {
      case 'string':
        return stringOf(s);
      case 'integer': {
        const min = typeof s.minimum === 'number' ? s.minimum : -1000;
        const max = typeof s.maximum === 'number' ? s.maximum : 1000;
        // Mostly small values (ids, pages), sometimes the bounds themselves.
        return fc.oneof(fc.integer({ min, max: Math.min(max, min + 50) }), fc.constantFrom(min, max));
      }
      case 'number':
        return fc.double({
          min: (s.minimum as number) ?? -1000,
          max: (s.maximum as number) ?? 1000,
          noNaN: true,
          noDefaultInfinity: true,
        });
      case 'boolean':
        return fc.boolean();
      case 'array': {
        const minLength = (s.minItems as number) ?? 0;
        const maxLength = Math.max(minLength, Math.min((s.maxItems as number) ?? 3, 3));
        return fc.array(this.of((s.items as Schema) ?? {}, name, depth + 1), { minLength, maxLength });
      }
      case 'object': {
        if (depth > 4) return fc.constant({});
        const props = (s.properties ?? {}) as Record<string, Schema>;
        const required = new Set((s.required as string[]) ?? []);
        const record: Record<string, fc.Arbitrary<unknown>> = {};
        for (const [key, prop] of Object.entries(props)) record[key] = this.of(prop, key, depth + 1);
        if (Object.keys(record).length === 0) {
          // A free-form map (metadata): a few small string-keyed values.
          return fc.dictionary(fc.string({ maxLength: 8 }), fc.oneof(fc.string({ maxLength: 8 }), fc.integer()), { maxKeys: 3 });
        }
        return fc.record(record, { requiredKeys: Object.keys(record).filter((k) => required.has(k)) });
      }
      default:
        return fc.constant(null);
    }
  }
}

function stringOf(s: Schema): fc.Arbitrary<string> {
  // `not: {enum}` (an appointment's external id is never "." or "..") narrows what is generated.
  const excluded = ((s.not as Schema | undefined)?.enum as unknown[] | undefined) ?? [];
  return excluded.length ? anyStringOf(s).filter((v) => !excluded.includes(v)) : anyStringOf(s);
}

function anyStringOf(s: Schema): fc.Arbitrary<string> {
  const minLength = (s.minLength as number) ?? 0;
  const maxLength = Math.max(minLength, Math.min((s.maxLength as number) ?? 40, 40));
  switch (s.format) {
    case 'date-time':
      return fc
        .date({ min: new Date('2020-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true })
        .map((d) => d.toISOString());
    case 'email':
      return fc.nat({ max: 10_000 }).map((n) => `client${n}@example.com`);
    case 'uuid':
      return fc.uuid();
    case 'uri':
      return fc.constantFrom('https://example.com/a.pdf', 'http://example.org/x');
  }
  if (typeof s.pattern === 'string')
    return fc
      .stringMatching(new RegExp(s.pattern))
      .filter((v) => v.length >= minLength && v.length <= ((s.maxLength as number) ?? Infinity));
  return fc.string({ minLength, maxLength, unit: 'grapheme-ascii' });
}
