-- Trigram search (docs/api.md#search) and composite GIN indexes that lead with business_id.
CREATE EXTENSION IF NOT EXISTS pg_trgm;
--> statement-breakpoint
CREATE EXTENSION IF NOT EXISTS btree_gin;
