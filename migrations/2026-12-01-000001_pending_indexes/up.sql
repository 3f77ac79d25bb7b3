-- Indexes of pending questions only, so their size follows the queue, not the history.
-- Queries spell `state = 'pending'` as a literal (server/db/sql.rs) to use them.
-- The queue page and list, oldest first: read in order, stop at the page's limit.
CREATE INDEX questions_pending_created ON questions (created_at, id) WHERE state = 'pending';
-- The expiry sweep: the due questions are a range at the start of this index.
CREATE INDEX questions_pending_expiry ON questions (expires_at) WHERE state = 'pending';
