-- Tool-call consent, as migrations/2026-12-02-000000_tool_calls makes it on SQLite: what the
-- server claimed about a tool (`questions.tool_info`, JSON), the tool a tool-call decision's
-- audit entry names, the tool-call and grant actions, and the grants themselves. PostgreSQL
-- alters the tables in place (SQLite rebuilds them). A question's `kind` has no CHECK here
-- (see the first migration), so `tool_call` needs none.
ALTER TABLE questions ADD COLUMN tool_info TEXT;

ALTER TABLE audit_log ADD COLUMN tool TEXT;
ALTER TABLE audit_log DROP CONSTRAINT audit_log_action_check;
ALTER TABLE audit_log ADD CONSTRAINT audit_log_action_check CHECK (action IN ('approved', 'edited', 'regenerated', 'rejected', 'auto_approved', 'delivered', 'answered', 'declined', 'cancelled', 'tool_allowed', 'tool_denied', 'tool_accepted', 'tool_edited', 'tool_declined', 'tool_expired', 'grant_made', 'grant_revoked'));

-- Grants: exact server and tool names; `expires_at` NULL means until revoked.
CREATE TABLE tool_grants (
    id TEXT PRIMARY KEY NOT NULL,
    server TEXT NOT NULL,
    tool TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT,
    revoked_at BIGINT
);
CREATE INDEX tool_grants_server_tool ON tool_grants (server, tool);
