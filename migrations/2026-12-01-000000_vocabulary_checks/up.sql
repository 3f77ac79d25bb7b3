-- The vocabulary as CHECK constraints: every word column accepts only the words of its type in
-- server/domain.rs (a unit test there keeps the lists in step). SQLite cannot add a CHECK to a
-- table, so each table is rebuilt: create the checked copy, copy every row, drop the old one,
-- rename. Db::open runs migrations with foreign keys off, so dropping `questions` cascades
-- nothing; the children are rebuilt in the same migration and keep their rows.

CREATE TABLE questions_checked (
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
INSERT INTO questions_checked (id, kind, server, session, tool, audience, state, phase,
    protocol_version, era, client_capabilities, rpc_id, request, response, elicitation_id,
    created_at, expires_at, decided_at, opened_at, revision, conversation)
SELECT id, kind, server, session, tool, audience, state, phase,
    protocol_version, era, client_capabilities, rpc_id, request, response, elicitation_id,
    created_at, expires_at, decided_at, opened_at, revision, conversation
FROM questions;

CREATE TABLE sampling_revisions_checked (
    question_id TEXT NOT NULL REFERENCES questions (id) ON DELETE CASCADE,
    revision INTEGER NOT NULL,
    params TEXT NOT NULL,
    author TEXT NOT NULL CHECK (author IN ('server', 'human', 'agent')),
    created_at BIGINT NOT NULL,
    PRIMARY KEY (question_id, revision)
);
INSERT INTO sampling_revisions_checked (question_id, revision, params, author, created_at)
SELECT question_id, revision, params, author, created_at FROM sampling_revisions;

CREATE TABLE sampling_runs_checked (
    id TEXT PRIMARY KEY NOT NULL,
    question_id TEXT NOT NULL REFERENCES questions (id) ON DELETE CASCADE,
    revision INTEGER NOT NULL,
    model_id TEXT NOT NULL,
    receipt TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('running', 'done', 'failed')),
    result TEXT,
    error TEXT,
    input_tokens BIGINT,
    output_tokens BIGINT,
    cost_usd DOUBLE,
    started_at BIGINT NOT NULL,
    finished_at BIGINT
);
INSERT INTO sampling_runs_checked (id, question_id, revision, model_id, receipt, state, result,
    error, input_tokens, output_tokens, cost_usd, started_at, finished_at)
SELECT id, question_id, revision, model_id, receipt, state, result,
    error, input_tokens, output_tokens, cost_usd, started_at, finished_at
FROM sampling_runs;

CREATE TABLE approvals_checked (
    approval_id TEXT PRIMARY KEY NOT NULL,
    question_id TEXT NOT NULL REFERENCES questions (id) ON DELETE CASCADE,
    phase TEXT NOT NULL CHECK (phase IN ('request', 'response')),
    revision INTEGER NOT NULL,
    run_id TEXT,
    decision TEXT NOT NULL CHECK (decision IN ('approve', 'reject', 'regenerate', 'send')),
    model_id TEXT,
    actor TEXT NOT NULL CHECK (actor IN ('human', 'agent') OR actor LIKE 'rule:_%'),
    created_at BIGINT NOT NULL
);
INSERT INTO approvals_checked (approval_id, question_id, phase, revision, run_id, decision,
    model_id, actor, created_at)
SELECT approval_id, question_id, phase, revision, run_id, decision,
    model_id, actor, created_at
FROM approvals;

CREATE TABLE audit_log_checked (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    at BIGINT NOT NULL,
    actor TEXT NOT NULL CHECK (actor IN ('human', 'agent') OR actor LIKE 'rule:_%'),
    action TEXT NOT NULL CHECK (action IN ('approved', 'edited', 'regenerated', 'rejected', 'auto_approved', 'delivered')),
    question_id TEXT NOT NULL,
    server TEXT NOT NULL,
    model_id TEXT,
    input_tokens BIGINT,
    output_tokens BIGINT,
    cost_usd DOUBLE,
    request_digest TEXT,
    response_digest TEXT
);
INSERT INTO audit_log_checked (seq, at, actor, action, question_id, server, model_id,
    input_tokens, output_tokens, cost_usd, request_digest, response_digest)
SELECT seq, at, actor, action, question_id, server, model_id,
    input_tokens, output_tokens, cost_usd, request_digest, response_digest
FROM audit_log;

CREATE TABLE auto_approve_rules_checked (
    id TEXT PRIMARY KEY NOT NULL,
    server TEXT NOT NULL,
    scope TEXT NOT NULL CHECK (scope IN ('request', 'both')),
    author TEXT NOT NULL CHECK (author IN ('human', 'agent')),
    reason TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    revoked_at BIGINT
);
INSERT INTO auto_approve_rules_checked (id, server, scope, author, reason, created_at,
    expires_at, revoked_at)
SELECT id, server, scope, author, reason, created_at, expires_at, revoked_at
FROM auto_approve_rules;

DROP TABLE approvals;
DROP TABLE sampling_runs;
DROP TABLE sampling_revisions;
DROP TABLE audit_log;
DROP TABLE auto_approve_rules;
DROP TABLE questions;

ALTER TABLE questions_checked RENAME TO questions;
ALTER TABLE sampling_revisions_checked RENAME TO sampling_revisions;
ALTER TABLE sampling_runs_checked RENAME TO sampling_runs;
ALTER TABLE approvals_checked RENAME TO approvals;
ALTER TABLE audit_log_checked RENAME TO audit_log;
ALTER TABLE auto_approve_rules_checked RENAME TO auto_approve_rules;

CREATE UNIQUE INDEX questions_pending_request ON questions (server, session, rpc_id) WHERE state = 'pending';
CREATE INDEX questions_state_created ON questions (state, created_at);
CREATE INDEX questions_decided ON questions (decided_at, id) WHERE decided_at IS NOT NULL;
CREATE INDEX questions_conversation ON questions (conversation);
CREATE INDEX sampling_runs_question ON sampling_runs (question_id, started_at);
CREATE INDEX audit_log_at ON audit_log (at);
