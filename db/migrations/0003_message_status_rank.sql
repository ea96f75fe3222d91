-- docs/api.md#monotonic-updates: a message status only moves forward. Every status write compares ranks with this one
-- function, in the same UPDATE (no read-then-write race). Inbound `received` outranks everything so
-- nothing moves it; statuses that make no sense for the message type rank NULL (never applied).
CREATE OR REPLACE FUNCTION message_status_rank(status text, message_type text) RETURNS int
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE
    WHEN status = 'received' THEN 100
    WHEN message_type = 'CALL' THEN CASE status
      WHEN 'initiated' THEN 0
      WHEN 'ringing' THEN 1
      WHEN 'in_progress' THEN 2
      WHEN 'completed' THEN 3 WHEN 'busy' THEN 3 WHEN 'no_answer' THEN 3 WHEN 'canceled' THEN 3 WHEN 'failed' THEN 3
    END
    ELSE CASE status
      WHEN 'initiated' THEN 0
      WHEN 'queued' THEN 1
      WHEN 'sending' THEN 2
      WHEN 'sent' THEN 3
      WHEN 'delivered' THEN 4 WHEN 'undelivered' THEN 4 WHEN 'failed' THEN 4 WHEN 'bounced' THEN 4 WHEN 'canceled' THEN 4
      WHEN 'read' THEN 5
    END
  END
$$;
