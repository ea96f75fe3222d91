import { describe, expect, it } from 'vitest';
import { renderReminder, unknownReminderVariables } from './appointments';

/** docs/api.md#reminder-rules: a reminder's variables, as the client reads them. */
describe('a reminder’s text', () => {
  // Tuesday 1 December 2026, 21:00 UTC: 3:00 PM in Chicago.
  const context: Parameters<typeof renderReminder>[1] = {
    startsAt: new Date('2026-12-01T21:00:00Z'),
    timeZone: 'America/Chicago',
    locale: 'en-US',
    service: 'Haircut',
    staffName: '  Rui   Costa ',
    locationName: 'Uptown',
    businessName: 'Bloom',
    clientName: 'Ana Maria Lima',
  };
  const all = '{client_first_name}: {service} with {staff_first_name} at {location_name} ({business_name}), {appointment_time}';

  it('names the start on the location’s clock in the business’s locale, always with its date, and first names by their first word', () => {
    expect(renderReminder(all, context)).toEqual({
      text: 'Ana: Haircut with Rui at Uptown (Bloom), Tuesday, December 1 3:00 PM',
    });
    expect(renderReminder('{appointment_time}', { ...context, locale: 'es-ES' })).toEqual({
      text: 'martes, 1 de diciembre 15:00',
    });
    // A locale Intl does not take reads as en-US.
    expect(renderReminder('{appointment_time}', { ...context, locale: 'not a locale' })).toEqual({
      text: 'Tuesday, December 1 3:00 PM',
    });
  });

  it('says the business’s name for {location_name} without a location', () => {
    expect(renderReminder('See you at {location_name}', { ...context, locationName: null })).toEqual({
      text: 'See you at Bloom',
    });
  });

  it('answers the variables without a value rather than a text with a {…} in it', () => {
    const bare = { ...context, service: '  ', staffName: null, clientName: ' ' };
    expect(renderReminder(all, bare)).toEqual({ missing: ['client_first_name', 'service', 'staff_first_name'] });
    expect(renderReminder('{business_name}: see you {appointment_time}', bare)).toEqual({
      text: 'Bloom: see you Tuesday, December 1 3:00 PM',
    });
  });

  it('refuses names that are no variable when a rule is saved', () => {
    expect(unknownReminderVariables('{first_name} {service} {next_opening}')).toEqual(['first_name', 'next_opening']);
  });
});
