DROP TABLE tool_grants;
DELETE FROM audit_log WHERE action IN ('tool_allowed', 'tool_denied', 'tool_accepted', 'tool_edited', 'tool_declined', 'tool_expired', 'grant_made', 'grant_revoked');
ALTER TABLE audit_log DROP CONSTRAINT audit_log_action_check;
ALTER TABLE audit_log ADD CONSTRAINT audit_log_action_check CHECK (action IN ('approved', 'edited', 'regenerated', 'rejected', 'auto_approved', 'delivered', 'answered', 'declined', 'cancelled'));
ALTER TABLE audit_log DROP COLUMN tool;
DELETE FROM questions WHERE kind = 'tool_call';
ALTER TABLE questions DROP COLUMN tool_info;
