ALTER TABLE "notification_digests" ADD COLUMN "email_detail" text;--> statement-breakpoint
CREATE INDEX "notification_digests_sent_idx" ON "notification_digests" USING btree ("sent_at");--> statement-breakpoint
CREATE INDEX "notifications_read_idx" ON "notifications" USING btree ("read_at") WHERE "notifications"."read_at" is not null;