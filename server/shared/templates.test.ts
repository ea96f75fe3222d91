import { describe, expect, it } from 'vitest';
import { firstName, parseTemplate, placeholdersIn, resolveTemplate, unknownVariables, type TemplateContext } from './templates';

const full: TemplateContext = {
  'client.first_name': 'Ana',
  'client.name': 'Ana Lima',
  'location.name': 'Downtown',
  'location.phone': '(415) 555-0100',
  'staff.first_name': 'Sam',
  'business.name': 'Glow Studio',
};

describe('resolveTemplate', () => {
  it.each([
    ['Hi {{client.first_name}}!', full, 'Hi Ana!', [], []],
    ['Hi {{ client.first_name }}, {{staff.first_name}} here', full, 'Hi Ana, Sam here', [], []],
    ['{{business.name}} at {{location.name}}: {{location.phone}}', full, 'Glow Studio at Downtown: (415) 555-0100', [], []],
    ['Dear {{client.name}}', full, 'Dear Ana Lima', [], []],
    ['No variables at all', full, 'No variables at all', [], []],
    // A value missing for this recipient stays visible, normalised, and is reported.
    [
      'Hi {{ client.first_name }}!',
      { ...full, 'client.first_name': null },
      'Hi {{client.first_name}}!',
      ['client.first_name'],
      [],
    ],
    ['Hi {{client.name}}', { ...full, 'client.name': '   ' }, 'Hi {{client.name}}', ['client.name'], []],
    ['{{location.name}} {{location.phone}}', {}, '{{location.name}} {{location.phone}}', ['location.name', 'location.phone'], []],
    // Names are case-sensitive and from a fixed list; unknown ones stay as written.
    ['Hi {{Client.First_Name}}', full, 'Hi {{Client.First_Name}}', [], ['Client.First_Name']],
    ['Hi {{ client.nickname }}', full, 'Hi {{ client.nickname }}', [], ['client.nickname']],
    // Not placeholders at all: plain text.
    ['Use {{ and }} freely', full, 'Use {{ and }} freely', [], ['and']],
    ['A lone {{ brace', full, 'A lone {{ brace', [], []],
    ['{{}} and {{   }}', full, '{{}} and {{   }}', [], []],
    ['{{client.first_name\n}}', full, '{{client.first_name\n}}', [], []],
    ['{{{client.first_name}}}', full, '{Ana}', [], []],
    ['Twice {{client.first_name}} {{client.first_name}}', { 'client.first_name': 'Bo' }, 'Twice Bo Bo', [], []],
  ])('%j', (template, context, text, missing, unknown) => {
    expect(resolveTemplate(template, context)).toEqual({ text, missing, unknown });
  });

  it('reads a long text of unclosed braces in linear time', () => {
    const hostile = '{{'.repeat(200_000) + 'x'.repeat(100);
    const started = performance.now();
    expect(resolveTemplate(hostile, full).text).toBe(hostile);
    expect(performance.now() - started).toBeLessThan(1000);
  });
});

describe('helpers', () => {
  it('lists unknown names once, and every placeholder left in a text', () => {
    expect(unknownVariables('{{a}} {{client.name}} {{a}} {{b.c}}')).toEqual(['a', 'b.c']);
    expect(placeholdersIn('Hi {{client.first_name}}, {{oops}} and {{client.first_name}}')).toEqual(['client.first_name', 'oops']);
    expect(placeholdersIn('Hi Ana')).toEqual([]);
  });

  it('splits text and placeholders', () => {
    expect(parseTemplate('a{{ x }}b')).toEqual([
      { kind: 'text', text: 'a' },
      { kind: 'placeholder', raw: '{{ x }}', name: 'x' },
      { kind: 'text', text: 'b' },
    ]);
  });

  it.each([
    ['Ana Lima', 'Ana'],
    ['  Ana\tLima ', 'Ana'],
    ['Cher', 'Cher'],
    ['', null],
    [null, null],
  ])('firstName(%j) = %j', (name, first) => expect(firstName(name)).toBe(first));
});
