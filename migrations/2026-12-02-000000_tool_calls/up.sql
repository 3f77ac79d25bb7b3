-- Tool-call consent: a question may be a host's `tools/call` (kind `tool_call`), with what the
-- server claimed about the tool in `tools/list` (`tool_info`: description, inputSchema,
-- annotations, as JSON); the audit names the tool of a tool-call decision and takes the
-- tool-call and grant actions; grants ("allow this tool on this server for an hour") are
-- kept in `tool_grants`. Db::open runs migrations with foreign keys off, so rebuilding
-- `questions` keeps its children's rows.
CREATE TABLE questions_next (
    id TEXT PRIMARY KEY NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('sampling', 'form', 'url', 'tool_call')),
    server TEXT NOT NULL,
    session TEXT NOT NULL,
    tool TEXT,
    audience TEXT NOT NULL CHECK (audience IN ('human', 'agent')),
    state TEXT NOT NULL CHECK (state IN ('pending', 'accepted', 'declined', 'cancelled', 'expired', 'withdrawn', 'completed')),
    phase TEXT CHECK (phase IS NULL OR phase IN ('request_review', 'running', 'response_review', 'tool_use_review')),
    protocol_version TEXT NOT NULL,
    era TEXT NOT NULL,
    client_capabilities TEXT NOT NULL,
    rpc_id TEXT NOT NULL,
    request TEXT NOT NULL,
    response TEXT,
    elicitation_id TEXT,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    decided_at BIGINT,
    opened_at BIGINT,
    revision INTEGER NOT NULL DEFAULT 1,
    conversation TEXT,
    tool_info TEXT
);
INSERT INTO questions_next (id, kind, server, session, tool, audience, state, phase,
    protocol_version, era, client_capabilities, rpc_id, request, response, elicitation_id,
    created_at, expires_at, decided_at, opened_at, revision, conversation)
SELECT id, kind, server, session, tool, audience, state, phase,
    protocol_version, era, client_capabilities, rpc_id, request, response, elicitation_id,
    created_at, expires_at, decided_at, opened_at, revision, conversation
FROM questions;
DROP TABLE questions;
ALTER TABLE questions_next RENAME TO questions;
CREATE UNIQUE INDEX questions_pending_request ON questions (server, session, rpc_id) WHERE state = 'pending';
CREATE INDEX questions_state_created ON questions (state, created_at, id);
CREATE INDEX questions_decided ON questions (decided_at, id) WHERE decided_at IS NOT NULL;
CREATE INDEX questions_conversation ON questions (conversation);
CREATE INDEX questions_state_expiry ON questions (state, expires_at);
CREATE INDEX questions_server_state ON questions (server, state);

CREATE TABLE audit_log_next (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    at BIGINT NOT NULL,
    actor TEXT NOT NULL CHECK (actor IN ('human', 'agent') OR actor LIKE 'rule:_%'),
    action TEXT NOT NULL CHECK (action IN ('approved', 'edited', 'regenerated', 'rejected', 'auto_approved', 'delivered', 'answered', 'declined', 'cancelled', 'tool_allowed', 'tool_denied', 'tool_accepted', 'tool_edited', 'tool_declined', 'tool_expired', 'grant_made', 'grant_revoked')),
    question_id TEXT NOT NULL,
    server TEXT NOT NULL,
    model_id TEXT,
    input_tokens BIGINT,
    output_tokens BIGINT,
    cost_usd DOUBLE,
    request_digest TEXT,
    response_digest TEXT,
    tool TEXT
);
INSERT INTO audit_log_next (seq, at, actor, action, question_id, server, model_id,
    input_tokens, output_tokens, cost_usd, request_digest, response_digest)
SELECT seq, at, actor, action, question_id, server, model_id,
    input_tokens, output_tokens, cost_usd, request_digest, response_digest
FROM audit_log;
DROP TABLE audit_log;
ALTER TABLE audit_log_next RENAME TO audit_log;
CREATE INDEX audit_log_at ON audit_log (at);

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
