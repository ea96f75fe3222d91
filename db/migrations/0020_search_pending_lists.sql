-- The search indexes' pending lists (docs/architecture.md#search-texts) were merged by whichever
-- insert found them over 4 MB (PostgreSQL's default gin_pending_list_limit), about three
-- 1,000-message requests: that request paid 30–40 ms more (bench:send). The worker merges them
-- every second; at 16 MB no request has to unless twelve such requests come within one second.
-- Set in place: the indexes are not rebuilt.
ALTER INDEX "message_search_content_trgm_idx" SET (gin_pending_list_limit = 16384);--> statement-breakpoint
ALTER INDEX "message_search_subject_trgm_idx" SET (gin_pending_list_limit = 16384);
