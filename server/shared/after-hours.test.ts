import { describe, expect, it } from 'vitest';
import { canonicalLocale, formatOpening, renderAfterHoursReply, unknownAfterHoursVariables } from './after-hours';

const at = (iso: string) => new Date(iso);
// Monday 2 March 2026, 18:00 in New York.
const NOW = at('2026-03-02T23:00:00Z');

describe('the after-hours answer text', () => {
  it('names the next opening on the location clock, in the business locale, with the date when it is a week or more away', () => {
    expect(formatOpening(at('2026-03-03T14:00:00Z'), NOW, 'America/New_York', 'en-US')).toBe('Tuesday 9:00 AM');
    expect(formatOpening(at('2026-03-03T14:00:00Z'), NOW, 'America/New_York', 'de-DE')).toBe('Dienstag 9:00');
    // The same instant is already Wednesday morning in Sydney.
    expect(formatOpening(at('2026-03-03T14:00:00Z'), NOW, 'Australia/Sydney', 'en-GB')).toBe('Wednesday 1:00');
    expect(formatOpening(at('2026-03-20T13:00:00Z'), NOW, 'America/New_York', 'en-US')).toBe('Friday, March 20 9:00 AM');
  });

  it('renders its variables, and sends nothing that names an opening when none is ahead', () => {
    const context = {
      businessName: 'Bloom',
      locationName: 'Downtown',
      nextOpening: at('2026-03-03T14:00:00Z'),
      timeZone: 'America/New_York',
      locale: 'en-US',
      now: NOW,
    };
    expect(renderAfterHoursReply('{business_name} {location_name} is closed; back {next_opening}. {x}', context)).toBe(
      'Bloom Downtown is closed; back Tuesday 9:00 AM. {x}',
    );
    expect(renderAfterHoursReply('{location_name}', { ...context, locationName: null })).toBe('Bloom');
    expect(renderAfterHoursReply('Back {next_opening}', { ...context, nextOpening: null })).toBeNull();
    expect(renderAfterHoursReply('We are closed.', { ...context, nextOpening: null })).toBe('We are closed.');
  });

  it('finds unknown variables and checks locales', () => {
    expect(unknownAfterHoursVariables('{business_name} {first_name} {first_name} {a b} {{next_opening}}')).toEqual([
      'first_name',
    ]);
    expect(canonicalLocale('EN-us')).toBe('en-US');
    expect(canonicalLocale('not a locale')).toBeNull();
  });
});
