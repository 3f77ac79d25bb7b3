-- Back to the audit without doors: entries about server controls are dropped.
DELETE FROM audit_log WHERE action LIKE 'server\_%';
ALTER TABLE audit_log DROP CONSTRAINT audit_log_subject_check;
ALTER TABLE audit_log DROP CONSTRAINT audit_log_action_check;
ALTER TABLE audit_log
    ADD CONSTRAINT audit_log_action_check CHECK (action IN ('approved', 'edited', 'regenerated', 'rejected', 'auto_approved', 'delivered', 'answered', 'declined', 'cancelled', 'opened', 'rule_created', 'rule_revoked', 'tool_allowed', 'tool_denied', 'tool_accepted', 'tool_edited', 'tool_declined', 'tool_expired', 'grant_made', 'grant_revoked')),
    ADD CONSTRAINT audit_log_subject_check CHECK (question_id IS NOT NULL OR rule_id IS NOT NULL OR tool IS NOT NULL);
ALTER TABLE audit_log DROP COLUMN via;
