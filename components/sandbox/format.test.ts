import { describe, expect, it } from 'vitest';
import { httpUrl } from './format';

describe('sandbox formatting', () => {
  it('links an attachment only when its URL is http(s): never javascript:, data: or a relative path', () => {
    expect(httpUrl('https://api.twilio.com/2010-04-01/Media/ME1')).toBe('https://api.twilio.com/2010-04-01/Media/ME1');
    expect(httpUrl(' http://example.com/a.png ')).toBe('http://example.com/a.png');
    expect(httpUrl('javascript:alert(1)')).toBeNull();
    expect(httpUrl('JavaScript:alert(1)')).toBeNull();
    expect(httpUrl('data:text/html,<script>alert(1)</script>')).toBeNull();
    expect(httpUrl('//evil.example/x')).toBeNull();
    expect(httpUrl(null)).toBeNull();
    expect(httpUrl('')).toBeNull();
  });
});
