-- Back to the sampling-only audit (entries of forms, URLs and rules are dropped).
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
FROM audit_log WHERE kind = 'sampling' AND question_id IS NOT NULL
    AND action NOT IN ('opened', 'rule_created', 'rule_revoked');
DROP TABLE audit_log;
ALTER TABLE audit_log_next RENAME TO audit_log;
CREATE INDEX audit_log_at ON audit_log (at);
