-- One audit over every kind of question and over the rules, as
-- migrations/2026-12-02-020000_one_audit makes it on SQLite: each entry names the kind of its
-- question (kept after the question is pruned; entries from before were of sampling questions,
-- or of tool calls where they name a tool), creating or revoking a rule is an entry of its own
-- (no question; `rule_id` names the rule), and an entry about a tool call a rule or grant
-- decided has no question. `kind` has no CHECK, as questions.kind has none here. `tool` is
-- moved after the new columns so the columns stand in the order schema.rs lists them.
ALTER TABLE audit_log ALTER COLUMN question_id DROP NOT NULL;
UPDATE audit_log SET question_id = NULL WHERE question_id = '';
ALTER TABLE audit_log RENAME COLUMN tool TO tool_before;
ALTER TABLE audit_log ADD COLUMN kind TEXT, ADD COLUMN rule_id TEXT, ADD COLUMN tool TEXT;
UPDATE audit_log SET tool = tool_before,
    kind = CASE WHEN tool_before IS NULL THEN 'sampling' ELSE 'tool_call' END;
ALTER TABLE audit_log DROP COLUMN tool_before;
ALTER TABLE audit_log DROP CONSTRAINT audit_log_action_check;
ALTER TABLE audit_log
    ADD CONSTRAINT audit_log_action_check CHECK (action IN ('approved', 'edited', 'regenerated', 'rejected', 'auto_approved', 'delivered', 'answered', 'declined', 'cancelled', 'opened', 'rule_created', 'rule_revoked', 'tool_allowed', 'tool_denied', 'tool_accepted', 'tool_edited', 'tool_declined', 'tool_expired', 'grant_made', 'grant_revoked')),
    ADD CONSTRAINT audit_log_subject_check CHECK (question_id IS NOT NULL OR rule_id IS NOT NULL OR tool IS NOT NULL),
    ADD CONSTRAINT audit_log_one_subject_check CHECK (question_id IS NULL OR rule_id IS NULL);
-- History reads the deciding entry of each question it lists.
CREATE INDEX audit_log_question ON audit_log (question_id, seq);
