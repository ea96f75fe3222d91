-- The after-hours answer (docs/api.md#after-hours-answer): a location's own text, null for the
-- business's (the business's lives in businesses.settings with its `locale`).
ALTER TABLE "locations" ADD COLUMN "after_hours_reply" text;
