import { describe, expect, it } from 'vitest';
import { fillPlaceholders, unknownPlaceholders } from './text-variables';

/** The one `{variable}` renderer of the after-hours answer and appointment reminders. */
describe('{variable} placeholders', () => {
  const values = { name: 'Ana', place: null as string | null, time: '3 PM' };

  it('replaces each variable, trims the result, and leaves names that are no variable as written', () => {
    expect(
      fillPlaceholders('  Hi {name}, at {time}. {other} {constructor} {name.x} { name } {{name}} ', { ...values, place: 'Main' }),
    ).toEqual({
      text: 'Hi Ana, at 3 PM. {other} {constructor} {name.x} { name } {Ana}',
    });
  });

  it('answers the variables without a value, each once, instead of a text with a {…} in it', () => {
    expect(fillPlaceholders('{place} {name} {place}', values)).toEqual({ missing: ['place'] });
    expect(fillPlaceholders('{name} only', values)).toEqual({ text: 'Ana only' });
  });

  it('finds the names that are none of the variables, each once, in order', () => {
    expect(unknownPlaceholders('{b} {name} {a} {b} {a b} {{c}}', ['name'])).toEqual(['b', 'a', 'c']);
  });
});
