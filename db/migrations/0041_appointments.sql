-- Appointments (docs/api.md#appointments): the platform's appointments, upserted by its id; reminders
-- as scheduled texts linked to their appointment (appointment_reminders, one active per rule and
-- start); a location's own reminder rules (null: the business's, in businesses.settings); the log's
-- new appointment.* types (partitioned events: the check names the column bare).
CREATE TABLE "appointment_reminders" (
	"business_id" integer NOT NULL,
	"appointment_id" integer NOT NULL,
	"message_id" bigint PRIMARY KEY NOT NULL,
	"before_seconds" integer NOT NULL,
	"for_starts_at" timestamp with time zone NOT NULL,
	"asks_confirmation" boolean NOT NULL,
	"active" boolean DEFAULT true NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "appointments" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "appointments_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"business_id" integer NOT NULL,
	"external_id" text NOT NULL,
	"client_id" integer NOT NULL,
	"location_id" integer,
	"staff_id" integer,
	"starts_at" timestamp with time zone NOT NULL,
	"ends_at" timestamp with time zone NOT NULL,
	"service" text,
	"status" text DEFAULT 'booked' NOT NULL,
	"notes" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "appointments_business_id_id_key" UNIQUE("business_id","id"),
	CONSTRAINT "appointments_status_check" CHECK ("appointments"."status" in ('booked', 'confirmed', 'canceled', 'completed', 'no_show')),
	CONSTRAINT "appointments_times_check" CHECK ("appointments"."starts_at" < "appointments"."ends_at"),
	CONSTRAINT "appointments_external_id_check" CHECK (char_length("appointments"."external_id") between 1 and 255),
	CONSTRAINT "appointments_service_check" CHECK (char_length("appointments"."service") <= 200),
	CONSTRAINT "appointments_notes_check" CHECK (char_length("appointments"."notes") <= 2000)
);
--> statement-breakpoint
ALTER TABLE "events" DROP CONSTRAINT "events_type_check";--> statement-breakpoint
ALTER TABLE "locations" ADD COLUMN "reminder_rules" jsonb;--> statement-breakpoint
ALTER TABLE "appointment_reminders" ADD CONSTRAINT "appointment_reminders_appointment_fk" FOREIGN KEY ("business_id","appointment_id") REFERENCES "public"."appointments"("business_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "appointment_reminders" ADD CONSTRAINT "appointment_reminders_message_fk" FOREIGN KEY ("business_id","message_id") REFERENCES "public"."messages"("business_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "appointments" ADD CONSTRAINT "appointments_business_id_businesses_id_fk" FOREIGN KEY ("business_id") REFERENCES "public"."businesses"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "appointments" ADD CONSTRAINT "appointments_client_fk" FOREIGN KEY ("business_id","client_id") REFERENCES "public"."clients"("business_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "appointments" ADD CONSTRAINT "appointments_location_fk" FOREIGN KEY ("business_id","location_id") REFERENCES "public"."locations"("business_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "appointments" ADD CONSTRAINT "appointments_staff_fk" FOREIGN KEY ("business_id","staff_id") REFERENCES "public"."staff"("business_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "appointment_reminders_once_key" ON "appointment_reminders" USING btree ("appointment_id","before_seconds","for_starts_at") WHERE "appointment_reminders"."active";--> statement-breakpoint
CREATE INDEX "appointment_reminders_appointment_idx" ON "appointment_reminders" USING btree ("business_id","appointment_id");--> statement-breakpoint
CREATE UNIQUE INDEX "appointments_business_external_id_key" ON "appointments" USING btree ("business_id","external_id");--> statement-breakpoint
CREATE INDEX "appointments_business_starts_idx" ON "appointments" USING btree ("business_id","starts_at","id");--> statement-breakpoint
CREATE INDEX "appointments_business_client_starts_idx" ON "appointments" USING btree ("business_id","client_id","starts_at");--> statement-breakpoint
ALTER TABLE "events" ADD CONSTRAINT "events_type_check" CHECK ("type" in ('message.received', 'message.created', 'message.status_updated', 'message.flagged', 'message.rescheduled', 'message.edited', 'conversation.created', 'conversation.assigned', 'conversation.status_changed', 'conversation.snoozed', 'conversation.woke', 'conversation.labeled', 'conversation.read', 'note.created', 'client.updated', 'client.opted_out', 'client.opted_in', 'consent.recorded', 'call.started', 'call.completed', 'voicemail.received', 'staff.availability_changed', 'webhook_endpoint.disabled', 'appointment.created', 'appointment.updated', 'appointment.confirmed', 'appointment.reschedule_requested', 'appointment.cancel_requested', 'appointment.canceled'));