import { sql, type SQL } from 'drizzle-orm';
import { knownZone } from '@/server/services/opening-hours';

/**
 * The zones reports read days in (docs/api.md#reports, When): the business's, and a location's own
 * when it has another (for a report asked for that location). Rollups are counted in these zones
 * (./rollups.ts); `key` says which, so a report can tell when they were counted in others.
 */
export type ReportZones = {
  business: string;
  /** Locations whose zone is not the business's, and that zone. */
  own: ReadonlyMap<number, string>;
  key: string;
};

export type LocationZone = { id: number; zone: string | null };

/** The business's locations with a zone of their own, as reportZones takes them (a json array), in SQL. */
export const locationZones = (businessId: SQL) => sql`
  (select coalesce(json_agg(json_build_object('id', l.id, 'zone', l.timezone)), '[]') from locations l
   where l.business_id = ${businessId} and l.timezone is not null)`;

/** The zones of a business from its stored ones (an unknown zone reads as the business's, as opening hours do). */
export function reportZones(businessZone: string | null, locations: readonly LocationZone[]): ReportZones {
  const business = knownZone(businessZone) ?? 'UTC';
  const own = new Map<number, string>();
  for (const l of [...locations].sort((a, b) => a.id - b.id)) {
    const zone = knownZone(l.zone);
    if (zone && zone !== business) own.set(l.id, zone);
  }
  return { business, own, key: JSON.stringify([business, [...own]]) };
}

/** The zone a report's days are read in: the location's own with `location_id`, else the business's. */
export const zoneFor = (zones: ReportZones, locationId: number | undefined): { zone: string; local: boolean } => {
  const own = locationId === undefined ? undefined : zones.own.get(locationId);
  return own ? { zone: own, local: true } : { zone: zones.business, local: false };
};

/** The zones as the rollups' writes take them: the business's for every row, a location's own for its rows. */
export const zoneRows = (zones: ReportZones) => [
  { local: false, location_id: null as number | null, zone: zones.business },
  ...[...zones.own].map(([id, zone]) => ({ local: true, location_id: id as number | null, zone })),
];
