-- From when a reply answers a notification's email (its message's time, or the event that began
-- the round of its email). Rows written before take their last change's time, the closest they kept.
ALTER TABLE "notifications" ADD COLUMN "reply_after" timestamp with time zone;--> statement-breakpoint
UPDATE "notifications" SET "reply_after" = "updated_at";--> statement-breakpoint
ALTER TABLE "notifications" ALTER COLUMN "reply_after" SET NOT NULL;
