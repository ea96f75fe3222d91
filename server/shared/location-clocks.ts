import { openingClock, type OpeningClock, type OpeningHours } from './opening-hours';

/** A business's opening clock per location (null: the business's own), as a feature asks for them. */
export type LocationClocks = (locationId: number | null) => OpeningClock;

/**
 * The clocks of one business's locations, each built on first use and kept: building one costs far
 * more than asking it, and a sweep asks the same few locations for every conversation (the waiting
 * digest; reports' recount). `forLocation` is what applies where (server/services/opening-hours.ts
 * `businessOpeningHours(...).forLocation`), read once by the caller for the whole sweep.
 */
export function locationClocks(forLocation: (locationId: number | null) => OpeningHours): LocationClocks {
  const clocks = new Map<number | null, OpeningClock>();
  return (locationId) => {
    let clock = clocks.get(locationId);
    if (!clock) clocks.set(locationId, (clock = openingClock(forLocation(locationId))));
    return clock;
  };
}
