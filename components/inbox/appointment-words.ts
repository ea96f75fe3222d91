import { durationSeconds } from '@/server/shared/appointments';
import { formatInZone } from '@/server/shared/zoned-time';

/** The Appointments card's words (appointments-card.tsx): an appointment's time and a reminder's rule. */

/** An instant on the appointment's clock (its location's time zone, else the business's), with the zone's short name. */
export function appointmentTime(timeZone: string, at: string, zoneName = true): string {
  if (!zoneName) return formatInZone(timeZone, at);
  const zone = new Intl.DateTimeFormat(undefined, { timeZone, timeZoneName: 'short' })
    .formatToParts(new Date(at))
    .find((p) => p.type === 'timeZoneName')?.value;
  return zone ? `${formatInZone(timeZone, at)} ${zone}` : formatInZone(timeZone, at);
}

/** `P2D` → "2 days before", `PT1H30M` → "1 h 30 min before". */
export function beforeWords(before: string): string {
  const s = durationSeconds(before);
  if (s === null) return before;
  const d = Math.floor(s / 86_400);
  const h = Math.floor((s % 86_400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  const parts = [d ? `${d} day${d === 1 ? '' : 's'}` : '', h ? `${h} h` : '', m ? `${m} min` : ''].filter(Boolean);
  return `${parts.join(' ')} before`;
}
