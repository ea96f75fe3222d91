-- report_replies named its business without a foreign key, unlike report_cycles and report_missed_calls:
-- a reply row is a business's figure and goes with the business (db/tenant-keys.test.ts).
ALTER TABLE "report_replies" ADD CONSTRAINT "report_replies_business_id_businesses_id_fk" FOREIGN KEY ("business_id") REFERENCES "public"."businesses"("id") ON DELETE cascade ON UPDATE no action;
