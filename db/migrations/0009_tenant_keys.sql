-- Tenant rows reference each other by (business_id, id): the database refuses a row pointing at
-- another business's client, conversation, staff member or location, and every key carries the
-- distribution column Citus needs (docs/production.md). The unique keys come before the foreign
-- keys that reference them.
ALTER TABLE "staff" DROP CONSTRAINT "staff_location_id_locations_id_fk";
--> statement-breakpoint
ALTER TABLE "clients" DROP CONSTRAINT "clients_location_id_locations_id_fk";
--> statement-breakpoint
ALTER TABLE "conversations" DROP CONSTRAINT "conversations_client_id_clients_id_fk";
--> statement-breakpoint
ALTER TABLE "conversations" DROP CONSTRAINT "conversations_location_id_locations_id_fk";
--> statement-breakpoint
ALTER TABLE "conversations" DROP CONSTRAINT "conversations_assigned_staff_id_staff_id_fk";
--> statement-breakpoint
ALTER TABLE "conversations" DROP CONSTRAINT "conversations_resolved_by_staff_id_staff_id_fk";
--> statement-breakpoint
ALTER TABLE "conversations" DROP CONSTRAINT "conversations_updated_by_staff_id_staff_id_fk";
--> statement-breakpoint
ALTER TABLE "messages" DROP CONSTRAINT "messages_conversation_id_conversations_id_fk";
--> statement-breakpoint
ALTER TABLE "messages" DROP CONSTRAINT "messages_client_id_clients_id_fk";
--> statement-breakpoint
ALTER TABLE "messages" DROP CONSTRAINT "messages_staff_id_staff_id_fk";
--> statement-breakpoint
ALTER TABLE "sessions" DROP CONSTRAINT "sessions_staff_id_staff_id_fk";
--> statement-breakpoint
ALTER TABLE "sessions" DROP CONSTRAINT "sessions_parent_id_sessions_id_fk";
--> statement-breakpoint
ALTER TABLE "locations" ADD CONSTRAINT "locations_business_id_id_key" UNIQUE("business_id","id");
--> statement-breakpoint
ALTER TABLE "staff" ADD CONSTRAINT "staff_business_id_id_key" UNIQUE("business_id","id");
--> statement-breakpoint
ALTER TABLE "clients" ADD CONSTRAINT "clients_business_id_id_key" UNIQUE("business_id","id");
--> statement-breakpoint
ALTER TABLE "conversations" ADD CONSTRAINT "conversations_business_id_id_key" UNIQUE("business_id","id");
--> statement-breakpoint
ALTER TABLE "sessions" ADD CONSTRAINT "sessions_business_id_id_key" UNIQUE("business_id","id");
--> statement-breakpoint
ALTER TABLE "staff" ADD CONSTRAINT "staff_location_fk" FOREIGN KEY ("business_id","location_id") REFERENCES "public"."locations"("business_id","id") ON DELETE no action ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "clients" ADD CONSTRAINT "clients_location_fk" FOREIGN KEY ("business_id","location_id") REFERENCES "public"."locations"("business_id","id") ON DELETE no action ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "conversations" ADD CONSTRAINT "conversations_client_fk" FOREIGN KEY ("business_id","client_id") REFERENCES "public"."clients"("business_id","id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "conversations" ADD CONSTRAINT "conversations_location_fk" FOREIGN KEY ("business_id","location_id") REFERENCES "public"."locations"("business_id","id") ON DELETE no action ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "conversations" ADD CONSTRAINT "conversations_assigned_staff_fk" FOREIGN KEY ("business_id","assigned_staff_id") REFERENCES "public"."staff"("business_id","id") ON DELETE no action ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "conversations" ADD CONSTRAINT "conversations_resolved_by_staff_fk" FOREIGN KEY ("business_id","resolved_by_staff_id") REFERENCES "public"."staff"("business_id","id") ON DELETE no action ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "conversations" ADD CONSTRAINT "conversations_updated_by_staff_fk" FOREIGN KEY ("business_id","updated_by_staff_id") REFERENCES "public"."staff"("business_id","id") ON DELETE no action ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "messages" ADD CONSTRAINT "messages_conversation_fk" FOREIGN KEY ("business_id","conversation_id") REFERENCES "public"."conversations"("business_id","id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "messages" ADD CONSTRAINT "messages_client_fk" FOREIGN KEY ("business_id","client_id") REFERENCES "public"."clients"("business_id","id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "messages" ADD CONSTRAINT "messages_staff_fk" FOREIGN KEY ("business_id","staff_id") REFERENCES "public"."staff"("business_id","id") ON DELETE no action ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "sessions" ADD CONSTRAINT "sessions_staff_fk" FOREIGN KEY ("business_id","staff_id") REFERENCES "public"."staff"("business_id","id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "sessions" ADD CONSTRAINT "sessions_parent_fk" FOREIGN KEY ("business_id","parent_id") REFERENCES "public"."sessions"("business_id","id") ON DELETE cascade ON UPDATE no action;
