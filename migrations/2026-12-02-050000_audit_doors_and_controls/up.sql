-- The audit says through which door each decision came (`via`: `browser`, `cli` for the API
-- token over the owner-only socket, `token` for the API token over TCP; NULL for rules, expiry,
-- withdrawal and entries from before), and records the person's per-server controls (pause,
-- resume, block, unblock, mute, unmute): such an entry names only its server.
CREATE TABLE audit_log_next (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    at BIGINT NOT NULL,
    actor TEXT NOT NULL CHECK (actor IN ('human', 'agent') OR actor LIKE 'rule:_%'),
    action TEXT NOT NULL CHECK (action IN ('approved', 'edited', 'regenerated', 'rejected', 'auto_approved', 'delivered', 'answered', 'declined', 'cancelled', 'opened', 'rule_created', 'rule_revoked', 'tool_allowed', 'tool_denied', 'tool_accepted', 'tool_edited', 'tool_declined', 'tool_expired', 'grant_made', 'grant_revoked', 'server_paused', 'server_resumed', 'server_blocked', 'server_unblocked', 'server_muted', 'server_unmuted')),
    question_id TEXT,
    server TEXT NOT NULL,
    model_id TEXT,
    input_tokens BIGINT,
    output_tokens BIGINT,
    cost_usd DOUBLE,
    request_digest TEXT,
    response_digest TEXT,
    kind TEXT CHECK (kind IS NULL OR kind IN ('sampling', 'form', 'url', 'tool_call')),
    rule_id TEXT,
    tool TEXT,
    via TEXT CHECK (via IS NULL OR via IN ('browser', 'cli', 'token')),
    CHECK (question_id IS NOT NULL OR rule_id IS NOT NULL OR tool IS NOT NULL
        OR action LIKE 'server\_%' ESCAPE '\'),
    CHECK (question_id IS NULL OR rule_id IS NULL)
);
INSERT INTO audit_log_next (seq, at, actor, action, question_id, server, model_id,
    input_tokens, output_tokens, cost_usd, request_digest, response_digest, kind, rule_id, tool)
SELECT seq, at, actor, action, question_id, server, model_id,
    input_tokens, output_tokens, cost_usd, request_digest, response_digest, kind, rule_id, tool
FROM audit_log;
DROP TABLE audit_log;
ALTER TABLE audit_log_next RENAME TO audit_log;
CREATE INDEX audit_log_at ON audit_log (at);
CREATE INDEX audit_log_question ON audit_log (question_id, seq);
