ALTER TABLE "businesses" ADD COLUMN "sending_window_start" smallint DEFAULT 480 NOT NULL;--> statement-breakpoint
ALTER TABLE "businesses" ADD COLUMN "sending_window_end" smallint DEFAULT 1260 NOT NULL;--> statement-breakpoint
ALTER TABLE "locations" ADD COLUMN "sending_window_start" smallint;--> statement-breakpoint
ALTER TABLE "locations" ADD COLUMN "sending_window_end" smallint;--> statement-breakpoint
ALTER TABLE "clients" ADD COLUMN "timezone" text;--> statement-breakpoint
ALTER TABLE "messages" ADD COLUMN "quiet_hours" jsonb;--> statement-breakpoint
ALTER TABLE "messages" ADD COLUMN "hold_reason" text;--> statement-breakpoint
ALTER TABLE "businesses" ADD CONSTRAINT "businesses_sending_window_check" CHECK ("businesses"."sending_window_start" >= 0 and "businesses"."sending_window_start" < "businesses"."sending_window_end" and "businesses"."sending_window_end" <= 1440);--> statement-breakpoint
ALTER TABLE "locations" ADD CONSTRAINT "locations_sending_window_check" CHECK (("locations"."sending_window_start" is null and "locations"."sending_window_end" is null) or ("locations"."sending_window_start" >= 0 and "locations"."sending_window_start" < "locations"."sending_window_end" and "locations"."sending_window_end" <= 1440));--> statement-breakpoint
ALTER TABLE "messages" ADD CONSTRAINT "messages_hold_reason_check" CHECK ("messages"."hold_reason" is null or "messages"."hold_reason" = 'quiet_hours');--> statement-breakpoint
-- Quiet hours (docs/api.md#quiet-hours): the first moment at or after `at` when the clock in `zone`
-- shows a minute in [start_minute, end_minute) — `at` itself while the window is open. The send
-- worker asks it of a scheduled text whose moment came while the window was closed (the worker was
-- down); server/shared/quiet-hours.ts computes the same for the requests that hold a text.
CREATE OR REPLACE FUNCTION sending_window_next_open(zone text, start_minute int, end_minute int, at timestamptz)
RETURNS timestamptz
LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT CASE
    WHEN w.minute >= start_minute AND w.minute < end_minute THEN at
    ELSE (date_trunc('day', w.local) + make_interval(mins => start_minute)
          + CASE WHEN w.minute >= end_minute THEN interval '1 day' ELSE interval '0' END) AT TIME ZONE zone
  END
  FROM (
    SELECT l.local, extract(hour FROM l.local)::int * 60 + extract(minute FROM l.local)::int AS minute
    FROM (SELECT at AT TIME ZONE zone AS local) l
  ) w
$$;
