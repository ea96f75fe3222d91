import { describe, expect, it } from 'vitest';
import { typedPhoneDigits } from './typed-phone';

describe('typedPhoneDigits', () => {
  it.each([
    ['0175', '0175'],
    ['555-0175', '5550175'],
    ['(415) 555-0175', '4155550175'],
    ['+1 415.555.0175', '14155550175'],
    ['  415 555  ', '415555'],
  ])('reads %j as the digits %s', (typed, digits) => {
    expect(typedPhoneDigits(typed)).toBe(digits);
  });

  it.each(['01', '(1)', 'Archie 0175', '0175x', 'ext. 0175', '555/0175', '', '1'.repeat(65)])('is null for %j', (typed) => {
    expect(typedPhoneDigits(typed)).toBeNull();
  });
});
