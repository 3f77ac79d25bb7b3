-- Two-step approval of sampling questions answered by a configured model.

-- The request as reviewed: revision 1 is what the server sent; each edit adds one.
ALTER TABLE questions ADD COLUMN revision INTEGER NOT NULL DEFAULT 1;

CREATE TABLE sampling_revisions (
    question_id TEXT NOT NULL REFERENCES questions (id) ON DELETE CASCADE,
    revision INTEGER NOT NULL,
    params TEXT NOT NULL,                    -- CreateMessageRequest params of this revision (JSON)
    author TEXT NOT NULL,                    -- server | human | agent
    created_at BIGINT NOT NULL,
    PRIMARY KEY (question_id, revision)
);

-- One model call: routed, run, and its result awaiting review.
CREATE TABLE sampling_runs (
    id TEXT PRIMARY KEY NOT NULL,            -- UUIDv7
    question_id TEXT NOT NULL REFERENCES questions (id) ON DELETE CASCADE,
    revision INTEGER NOT NULL,
    model_id TEXT NOT NULL,
    receipt TEXT NOT NULL,                   -- the route receipt (JSON)
    state TEXT NOT NULL,                     -- running | done | failed
    result TEXT,                             -- CreateMessageResult (JSON) once done
    error TEXT,                              -- why it failed
    input_tokens BIGINT,
    output_tokens BIGINT,
    cost_usd DOUBLE,
    started_at BIGINT NOT NULL,
    finished_at BIGINT
);
CREATE INDEX sampling_runs_question ON sampling_runs (question_id, started_at);

-- Decisions, one per approval id: replaying a decision finds its row and changes nothing.
CREATE TABLE approvals (
    approval_id TEXT PRIMARY KEY NOT NULL,   -- "<question>:request:<revision>" | "<question>:response:<run>"
    question_id TEXT NOT NULL REFERENCES questions (id) ON DELETE CASCADE,
    phase TEXT NOT NULL,                     -- request | response
    revision INTEGER NOT NULL,
    run_id TEXT,
    decision TEXT NOT NULL,                  -- approve | reject | regenerate | send
    model_id TEXT,
    actor TEXT NOT NULL,                     -- human | agent | rule:<id>
    created_at BIGINT NOT NULL
);

-- Append-only record of decisions; digests only, never prompt or response text. It outlives
-- the questions it describes (no foreign key) and has its own retention bound.
CREATE TABLE audit_log (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    at BIGINT NOT NULL,
    actor TEXT NOT NULL,
    action TEXT NOT NULL,                    -- approved | edited | declined | regenerated | rejected | auto_approved | delivered
    question_id TEXT NOT NULL,
    server TEXT NOT NULL,
    model_id TEXT,
    input_tokens BIGINT,
    output_tokens BIGINT,
    cost_usd DOUBLE,
    request_digest TEXT,
    response_digest TEXT
);
CREATE INDEX audit_log_at ON audit_log (at);

-- Opt-in, expiring auto-approve rules for sampling.
CREATE TABLE auto_approve_rules (
    id TEXT PRIMARY KEY NOT NULL,
    server TEXT NOT NULL,
    scope TEXT NOT NULL,                     -- request | both
    author TEXT NOT NULL,
    reason TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    revoked_at BIGINT
);
