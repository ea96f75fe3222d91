import { describe, expect, it } from 'vitest';
import { appointmentTime, beforeWords } from './appointment-words';

describe('the Appointments card’s words', () => {
  it('says how long before a reminder goes', () => {
    expect(beforeWords('P2D')).toBe('2 days before');
    expect(beforeWords('P1D')).toBe('1 day before');
    expect(beforeWords('PT2H')).toBe('2 h before');
    expect(beforeWords('PT1H30M')).toBe('1 h 30 min before');
    expect(beforeWords('P1DT12H')).toBe('1 day 12 h before');
    expect(beforeWords('P1W')).toBe('P1W'); // not a rule's spelling: shown as given
  });

  it('shows the time on the appointment’s clock, with the zone’s name', () => {
    const at = '2026-12-01T21:00:00.000Z';
    expect(appointmentTime('America/Chicago', at)).toMatch(/3:00\sPM CST$/);
    expect(appointmentTime('America/Chicago', at, false)).toMatch(/3:00\sPM$/);
    expect(appointmentTime('Europe/Madrid', at)).toMatch(/10:00\sPM/);
  });
});
