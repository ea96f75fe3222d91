import { describe, expect, it } from 'vitest';
import { escapeLike } from './pg-text';

describe('escapeLike', () => {
  it('escapes backslash, % and _', () => {
    expect(escapeLike('100%_a\\b')).toBe('100\\%\\_a\\\\b');
    expect(escapeLike('plain text')).toBe('plain text');
  });
});
