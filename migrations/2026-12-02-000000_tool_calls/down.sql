-- Back to questions without tool calls and an audit without their actions (their rows and
-- entries are dropped).
DROP TABLE tool_grants;
CREATE TABLE questions_next (
    id TEXT PRIMARY KEY NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('sampling', 'form', 'url')),
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
    conversation TEXT
);
INSERT INTO questions_next (id, kind, server, session, tool, audience, state, phase,
    protocol_version, era, client_capabilities, rpc_id, request, response, elicitation_id,
    created_at, expires_at, decided_at, opened_at, revision, conversation)
SELECT id, kind, server, session, tool, audience, state, phase,
    protocol_version, era, client_capabilities, rpc_id, request, response, elicitation_id,
    created_at, expires_at, decided_at, opened_at, revision, conversation
FROM questions WHERE kind <> 'tool_call';
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
    action TEXT NOT NULL CHECK (action IN ('approved', 'edited', 'regenerated', 'rejected', 'auto_approved', 'delivered', 'answered', 'declined', 'cancelled')),
    question_id TEXT NOT NULL,
    server TEXT NOT NULL,
    model_id TEXT,
    input_tokens BIGINT,
    output_tokens BIGINT,
    cost_usd DOUBLE,
    request_digest TEXT,
    response_digest TEXT
);
INSERT INTO audit_log_next (seq, at, actor, action, question_id, server, model_id,
    input_tokens, output_tokens, cost_usd, request_digest, response_digest)
SELECT seq, at, actor, action, question_id, server, model_id,
    input_tokens, output_tokens, cost_usd, request_digest, response_digest
FROM audit_log WHERE tool IS NULL;
DROP TABLE audit_log;
ALTER TABLE audit_log_next RENAME TO audit_log;
CREATE INDEX audit_log_at ON audit_log (at);
