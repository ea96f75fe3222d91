import { describe, expect, it } from 'vitest';
import { openApiDocument } from '@/server/http/openapi';
import { mustRefuse, type Parameter } from './documented-types';
import type { PlaceAt } from './hostile';
import type { Schema } from './schema-arbitrary';

/** The fuzzer's type oracle against the real document: what it must refuse, and what it must leave alone. */
const doc = openApiDocument() as {
  paths: Record<
    string,
    Record<string, { parameters?: Parameter[]; requestBody?: { content: Record<string, { schema: Schema }> } }>
  >;
  components: { schemas: Record<string, Schema> };
};

function judge(method: string, path: string, at: PlaceAt, value: unknown) {
  const op = doc.paths[path]![method]!;
  const body = op.requestBody?.content['application/json'];
  return mustRefuse(at, value, { params: op.parameters ?? [], body }, doc.components.schemas);
}

const conversations = (name: string, value: unknown) =>
  judge('get', '/businesses/{business_id}/conversations', { in: 'path', name }, value);
const listQuery = (name: string, value: unknown) =>
  judge('get', '/businesses/{business_id}/conversations', { in: 'query', name }, value);

describe('mustRefuse: path and query integers', () => {
  it('refuses what is not a positive integer in plain digits, or past the range', () => {
    for (const bad of ['-4', '0', '1.5', 'abc', '01', ' 1', '+1', '1e3', '', 2147483648, -1, 1.5, true, null, [3], [[3]]])
      expect(conversations('business_id', bad), JSON.stringify(bad)).not.toBeNull();
    expect(listQuery('page', 10_001)).not.toBeNull();
    expect(listQuery('location_id', ['1', '2'])).not.toBeNull(); // a repeated key
    expect(listQuery('location_id', [[3]])).not.toBeNull(); // written once, as [3]
  });

  it('leaves alone an id in range, however unknown, and parameters that are not integers', () => {
    for (const fine of [1, '7', 2147483647, '2147483647']) expect(conversations('business_id', fine), String(fine)).toBeNull();
    expect(listQuery('page', '3')).toBeNull();
    // How the fuzzer writes a list in a query: [3] is page=3, [] no page at all.
    expect(listQuery('page', [3])).toBeNull();
    expect(listQuery('page', [])).toBeNull();
    // Trimmed and split by the service: only integers are judged in a path or query.
    expect(listQuery('search', ' padded ')).toBeNull();
    expect(listQuery('status', 'open,closed')).toBeNull();
  });
});

describe('mustRefuse: body fields', () => {
  const recordEmail = (path: (string | number)[], value: unknown) =>
    judge('post', '/businesses/{business_id}/email/record', { in: 'body', path }, value);
  const anyChannel = (path: (string | number)[], value: unknown) =>
    judge('post', '/messages/{business_id}', { in: 'body', path }, value);

  it('refuses a value of another type, an integer past its range, a value outside an enumeration', () => {
    for (const bad of [true, [3], '3', 1.5, 0, 2147483648, null])
      expect(recordEmail(['messages', 0, 'message_id'], bad), JSON.stringify(bad)).not.toBeNull();
    expect(recordEmail(['sender_type'], 'nobody')).not.toBeNull();
    expect(recordEmail(['messages', 0, 'subject'], 42)).not.toBeNull();
    expect(recordEmail(['messages'], { 0: {} })).not.toBeNull();
    // POST /messages/{business_id}: documented by the queue variant, so judged in record mode too.
    expect(anyChannel(['send_at'], true)).not.toBeNull();
    expect(anyChannel(['messages', 0, 'media_ids', 0], true)).not.toBeNull();
  });

  it('leaves alone valid types, strings whatever their length, free-form values and unknown fields', () => {
    expect(recordEmail(['messages', 0, 'message_id'], 5)).toBeNull();
    expect(recordEmail(['messages', 0, 'subject'], `${' '.repeat(40_000)}!`)).toBeNull();
    expect(recordEmail(['messages', 0, 'provider_metadata', 'anything'], [true, { a: 1 }])).toBeNull();
    expect(recordEmail(['messages', 0, 'no_such_field'], true)).toBeNull();
    expect(anyChannel(['send_at'], '2030-01-01T00:00:00Z')).toBeNull();
    const assign = judge(
      'post',
      '/businesses/{business_id}/conversations/{conversation_id}/assign',
      { in: 'body', path: ['staff_id'] },
      null,
    );
    expect(assign).toBeNull(); // nullable: unassign
  });
});
