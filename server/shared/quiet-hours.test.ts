import { describe, expect, it } from 'vitest';
import {
  clockOf,
  DEFAULT_SENDING_WINDOW,
  heldByQuietHours,
  isLiveConversation,
  minutesOf,
  nextOpening,
  presetOf,
  SENDING_WINDOW_PRESETS,
  windowOpen,
} from './quiet-hours';

const CHICAGO = 'America/Chicago';
const NEW_YORK = 'America/New_York';
const at = (iso: string) => new Date(iso);

describe('the sending window', () => {
  it('is open from its start up to, not including, its end', () => {
    // 2026-11-30 in Chicago is CST (UTC−6).
    expect(windowOpen(CHICAGO, DEFAULT_SENDING_WINDOW, at('2026-11-30T13:59:00Z'))).toBe(false); // 07:59
    expect(windowOpen(CHICAGO, DEFAULT_SENDING_WINDOW, at('2026-11-30T14:00:00Z'))).toBe(true); // 08:00
    expect(windowOpen(CHICAGO, DEFAULT_SENDING_WINDOW, at('2026-12-01T02:59:00Z'))).toBe(true); // 20:59
    expect(windowOpen(CHICAGO, DEFAULT_SENDING_WINDOW, at('2026-12-01T03:00:00Z'))).toBe(false); // 21:00
  });

  it('opens next at today 08:00 before the window, tomorrow 08:00 after it, and now while open', () => {
    expect(nextOpening(CHICAGO, DEFAULT_SENDING_WINDOW, at('2026-11-30T12:30:00Z')).toISOString()).toBe(
      '2026-11-30T14:00:00.000Z',
    );
    expect(nextOpening(CHICAGO, DEFAULT_SENDING_WINDOW, at('2026-12-01T03:05:00Z')).toISOString()).toBe(
      '2026-12-01T14:00:00.000Z',
    );
    const open = at('2026-11-30T20:00:00Z');
    expect(nextOpening(CHICAGO, DEFAULT_SENDING_WINDOW, open)).toBe(open);
  });

  it('finds the local 08:00 across the spring-forward change', () => {
    // Sat 2027-03-13 21:05 EST; the clocks go forward that night, so Sunday 08:00 is EDT (UTC−4).
    expect(nextOpening(NEW_YORK, DEFAULT_SENDING_WINDOW, at('2027-03-14T02:05:00Z')).toISOString()).toBe(
      '2027-03-14T12:00:00.000Z',
    );
  });

  it('finds the local 08:00 across the fall-back change', () => {
    // Sat 2026-10-31 21:05 EDT; the clocks go back that night, so Sunday 08:00 is EST (UTC−5).
    expect(nextOpening(NEW_YORK, DEFAULT_SENDING_WINDOW, at('2026-11-01T01:05:00Z')).toISOString()).toBe(
      '2026-11-01T13:00:00.000Z',
    );
    // In the repeated hour (01:30 the second time, EST) the window is still closed until 08:00 EST.
    expect(nextOpening(NEW_YORK, DEFAULT_SENDING_WINDOW, at('2026-11-01T06:30:00Z')).toISOString()).toBe(
      '2026-11-01T13:00:00.000Z',
    );
  });

  it('goes by the local day, not the UTC day', () => {
    // 23:30 in Honolulu (UTC−10) is already the next day in UTC: the opening is 08:00 Honolulu's next day.
    expect(nextOpening('Pacific/Honolulu', DEFAULT_SENDING_WINDOW, at('2026-12-01T09:30:00Z')).toISOString()).toBe(
      '2026-12-01T18:00:00.000Z',
    );
  });

  it('may run to midnight ("24:00")', () => {
    const lateWindow = { start: 8 * 60, end: 24 * 60 };
    expect(windowOpen('UTC', lateWindow, at('2026-11-30T23:59:00Z'))).toBe(true);
    expect(nextOpening('UTC', lateWindow, at('2026-12-01T00:00:00Z')).toISOString()).toBe('2026-12-01T08:00:00.000Z');
  });
});

describe('clock times', () => {
  it('read and write HH:MM, 00:00 to 24:00', () => {
    expect(minutesOf('08:00')).toBe(480);
    expect(minutesOf('20:30')).toBe(1230);
    expect(minutesOf('24:00')).toBe(1440);
    for (const bad of ['24:01', '25:00', '8:00', '08:60', '0800', '', '08:00:00']) expect(minutesOf(bad)).toBeNull();
    expect(clockOf(480)).toBe('08:00');
    expect(clockOf(1440)).toBe('24:00');
  });

  it('names the presets, every one no wider than the federal window', () => {
    expect(presetOf({ start: 480, end: 1200 })?.id).toBe('us_florida');
    expect(presetOf(DEFAULT_SENDING_WINDOW)?.id).toBe('us_federal');
    expect(presetOf({ start: 540, end: 1200 })).toBeNull();
    for (const p of SENDING_WINDOW_PRESETS) {
      expect(p.start).toBeGreaterThanOrEqual(DEFAULT_SENDING_WINDOW.start);
      expect(p.end).toBeLessThanOrEqual(DEFAULT_SENDING_WINDOW.end);
    }
  });
});

describe('what quiet hours hold', () => {
  it('holds everything but a conversation, and marketing or review requests whatever the category', () => {
    expect(heldByQuietHours('conversational', null)).toBe(false);
    expect(heldByQuietHours('conversational', 'appointment_confirmation')).toBe(false);
    expect(heldByQuietHours('conversational', 'marketing')).toBe(true);
    expect(heldByQuietHours('conversational', 'review_request')).toBe(true);
    for (const category of ['campaign', 'reminder', 'transactional']) expect(heldByQuietHours(category, 'general')).toBe(true);
  });

  it('calls a conversation live while the client wrote less than a day ago', () => {
    const now = at('2026-11-30T12:00:00Z');
    expect(isLiveConversation(null, now)).toBe(false);
    expect(isLiveConversation(at('2026-11-29T12:00:01Z'), now)).toBe(true);
    expect(isLiveConversation(at('2026-11-29T12:00:00Z'), now)).toBe(false);
  });
});
