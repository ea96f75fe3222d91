-- Client search (server/services/search.ts, clientMatches; docs/architecture.md#client-search)
-- within one business. The old trigram index held every business's clients, so a business's
-- search either intersected it with the business's rows or filtered all of them: with a term that
-- is a whole number (the name/address match OR the number, through clients_business_phone_idx)
-- the plan read every client of the business. Led by business_id (btree_gin), this index answers
-- the business's matches alone, and a whole number as a BitmapOr with the number's index. On
-- 300,000 clients in 3,043 businesses (generic plans, as the pool runs them), for a business of
-- 50,000: `(415) 555-0175` 391 ms -> 0.9 ms, `0175` 11 -> 0.8 ms, `olsen` 84 -> 30 ms. Writes to
-- clients wait while it builds (about 6 s per 200,000 clients).
CREATE INDEX "clients_business_search_trgm_idx" ON "clients" USING gin ("business_id",(coalesce("name", '') || ' ' || coalesce("email", '') || ' ' || coalesce("phone_number", '')) gin_trgm_ops);--> statement-breakpoint
DROP INDEX "clients_search_trgm_idx";
