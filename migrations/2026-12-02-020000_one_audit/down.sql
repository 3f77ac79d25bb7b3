-- Back to the audit of sampling questions and tool calls (entries of forms, URLs and rules are
-- dropped).
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
    input_tokens, output_tokens, cost_usd, request_digest, response_digest, tool)
SELECT seq, at, actor, action, COALESCE(question_id, ''), server, model_id,
    input_tokens, output_tokens, cost_usd, request_digest, response_digest, tool
FROM audit_log WHERE (kind = 'sampling' AND question_id IS NOT NULL
    AND action NOT IN ('opened', 'rule_created', 'rule_revoked')) OR kind = 'tool_call';
DROP TABLE audit_log;
ALTER TABLE audit_log_next RENAME TO audit_log;
CREATE INDEX audit_log_at ON audit_log (at);
