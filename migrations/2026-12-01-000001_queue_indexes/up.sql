-- Indexes the queue reads in order, so a page of the oldest pending questions and the due
-- ones are a range of an index however many questions the store holds (without statistics,
-- SQLite prefers an index whose leading column is compared with `=`, so both lead with state).
-- The queue page and list, oldest first (ties by id): read in order, stop at the limit.
DROP INDEX questions_state_created;
CREATE INDEX questions_state_created ON questions (state, created_at, id);
-- The expiry sweep: the due questions are the start of the `pending` range.
CREATE INDEX questions_state_expiry ON questions (state, expires_at);
-- A server's pending count (the per-server limit, checked at every open).
CREATE INDEX questions_server_state ON questions (server, state);
