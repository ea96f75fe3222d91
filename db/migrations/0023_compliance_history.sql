-- A consent record dated after it was made (up to 5 minutes of "clock skew" used to be accepted)
-- outranked every withdrawal made until its date, for good: such records are dated when they were
-- made, and the database refuses them from now on (docs/api.md#consent).
UPDATE "consents" SET "recorded_at" = "created_at" WHERE "recorded_at" > "created_at";
--> statement-breakpoint
ALTER TABLE "consents" ADD CONSTRAINT "consents_recorded_at_check" CHECK ("consents"."recorded_at" <= "consents"."created_at");
