-- Opening hours (docs/api.md#opening-hours): when a business, or one of its locations, answers its
-- clients. One row per owner (the business's own with a null location, and each location's own):
-- NULLS NOT DISTINCT makes the business's row unique too. The schedule is validated by the service;
-- the table only keeps its shape. Distinct from quiet hours' sending window (migration 0014).
CREATE TABLE "opening_hours" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "opening_hours_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"business_id" integer NOT NULL,
	"location_id" integer,
	"weekly" jsonb NOT NULL,
	"exceptions" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "opening_hours_owner_key" UNIQUE NULLS NOT DISTINCT("business_id","location_id"),
	CONSTRAINT "opening_hours_shape_check" CHECK (jsonb_typeof("opening_hours"."weekly") = 'object' and jsonb_typeof("opening_hours"."exceptions") = 'array')
);
--> statement-breakpoint
ALTER TABLE "opening_hours" ADD CONSTRAINT "opening_hours_business_id_businesses_id_fk" FOREIGN KEY ("business_id") REFERENCES "public"."businesses"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "opening_hours" ADD CONSTRAINT "opening_hours_location_fk" FOREIGN KEY ("business_id","location_id") REFERENCES "public"."locations"("business_id","id") ON DELETE cascade ON UPDATE no action;