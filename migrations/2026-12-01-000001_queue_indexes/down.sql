DROP INDEX questions_server_state;
DROP INDEX questions_state_expiry;
DROP INDEX questions_state_created;
CREATE INDEX questions_state_created ON questions (state, created_at);
