import type { PlaceAt } from './hostile';
import type { Schema } from './schema-arbitrary';

/**
 * The fuzzer's oracle for docs/api.md#conventions: a value of a type the document does not give its
 * field is refused, in every mode, including a field the mode then ignores; a path or query integer
 * is plain digits in its range. Given one mutated place of a request, `mustRefuse` answers why the
 * service may not accept the request (a 2xx), or null when the value may be acceptable.
 *
 * Judged: JSON types, enumerations, constants and integer ranges. Never the lengths, formats or
 * patterns of strings: the service trims, lower-cases and reads phone numbers before those rules
 * apply, so a padded string may be valid.
 * A body field is judged by every schema that documents it (each alternative of a union that names
 * it); a field no schema names is unknown, and unknown fields are ignored.
 */
export type Parameter = { name: string; in: string; schema: Schema };

export function mustRefuse(
  at: PlaceAt,
  value: unknown,
  op: { params: Parameter[]; body?: { schema: Schema } },
  components: Record<string, Schema>,
): string | null {
  const resolve = (schema: Schema) => {
    let s = schema;
    for (let i = 0; i < 20 && typeof s.$ref === 'string'; i++) s = components[(s.$ref as string).split('/').pop()!] ?? {};
    return s;
  };
  if (at.in === 'body') {
    if (!op.body) return null;
    const documented = schemasAt(op.body.schema, at.path, resolve);
    if (documented.length === 0 || documented.some((s) => allows(s, value, resolve))) return null;
    return `body ${at.path.join('.')} is documented as ${documented.map((s) => describe(s, resolve)).join(' | ')}`;
  }
  const parameter = op.params.find((p) => p.in === at.in && p.name === at.name);
  if (!parameter) return null;
  const schema = resolve(parameter.schema);
  if (schema.type !== 'integer') return null;
  // As the fuzzer writes it (urlOf): a path segment, or in a query one value per array element (a
  // repeated key; an empty array is no parameter at all, a one-element array a single value).
  let written = value;
  if (Array.isArray(value) && at.in === 'query') {
    if (value.length > 1) return `query ${at.name} is one integer, not a repeated key`;
    written = value[0];
  }
  if (written === undefined) return null;
  const text = typeof written === 'string' ? written : JSON.stringify(written);
  if (typeof schema.pattern === 'string' && !new RegExp(schema.pattern).test(text))
    return `${at.in} ${at.name} ${JSON.stringify(text)} does not match ${schema.pattern}`;
  const n = Number(text);
  if (!Number.isSafeInteger(n) || !inRange(n, schema)) return `${at.in} ${at.name} ${text} is out of its range`;
  return null;
}

/** The schemas that document the field at `path` (empty when none does). */
export function schemasAt(root: Schema, path: (string | number)[], resolve: (schema: Schema) => Schema): Schema[] {
  let current = alternatives(root, resolve);
  for (const key of path) {
    const next: Schema[] = [];
    for (const s of current) {
      if (typeof key === 'number') {
        if (s.items && typeof s.items === 'object') next.push(s.items as Schema);
        continue;
      }
      const properties = (s.properties ?? {}) as Record<string, Schema>;
      if (Object.hasOwn(properties, key)) next.push(properties[key]!);
      // A map's values (free-form metadata): documented by additionalProperties, when it says anything.
      else if (!s.properties && s.additionalProperties && typeof s.additionalProperties === 'object')
        next.push(s.additionalProperties as Schema);
    }
    current = next.flatMap((s) => alternatives(s, resolve));
    if (current.length === 0) return [];
  }
  return current;
}

/** A schema's alternatives, references resolved: anyOf/oneOf flattened (allOf kept whole). */
function alternatives(schema: Schema, resolve: (schema: Schema) => Schema): Schema[] {
  const s = resolve(schema);
  const options = (s.anyOf ?? s.oneOf) as Schema[] | undefined;
  return options?.length ? options.flatMap((o) => alternatives(o, resolve)) : [s];
}

/** Whether `value` has a type `schema` admits (and, for integers and enums, a value it admits). */
export function allows(schema: Schema, value: unknown, resolve: (schema: Schema) => Schema): boolean {
  const s = resolve(schema);
  const options = (s.anyOf ?? s.oneOf) as Schema[] | undefined;
  if (options?.length) return options.some((o) => allows(o, value, resolve));
  if (Array.isArray(s.allOf) && !(s.allOf as Schema[]).every((o) => allows(o, value, resolve))) return false;
  if (s.const !== undefined) return s.const === value;
  if (Array.isArray(s.enum)) return (s.enum as unknown[]).includes(value);
  const types = ([] as unknown[]).concat(s.type ?? (s.properties ? 'object' : []));
  if (types.length === 0) return true; // no type stated: anything (free-form values)
  return types.some((t) => {
    switch (t) {
      case 'null':
        return value === null;
      case 'boolean':
        return typeof value === 'boolean';
      case 'integer':
        return Number.isInteger(value) && inRange(value as number, s);
      case 'number':
        return typeof value === 'number' && Number.isFinite(value);
      case 'string':
        return typeof value === 'string';
      case 'array':
        return Array.isArray(value);
      case 'object':
        return typeof value === 'object' && value !== null && !Array.isArray(value);
      default:
        return true;
    }
  });
}

function inRange(n: number, s: Schema): boolean {
  return (typeof s.minimum !== 'number' || n >= s.minimum) && (typeof s.maximum !== 'number' || n <= s.maximum);
}

function describe(schema: Schema, resolve: (schema: Schema) => Schema): string {
  const s = resolve(schema);
  if (Array.isArray(s.enum)) return `one of ${JSON.stringify(s.enum)}`;
  const types = ([] as unknown[]).concat(s.type ?? (s.properties ? 'object' : 'anything'));
  const range = types.includes('integer') ? ` ${s.minimum ?? '…'}…${s.maximum ?? '…'}` : '';
  return `${types.join('/')}${range}`;
}
