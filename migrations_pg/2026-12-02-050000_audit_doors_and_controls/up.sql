-- As migrations/2026-12-02-050000_audit_doors_and_controls makes it on SQLite: the audit says
-- through which door each decision came (`via`: `browser`, `cli` for the API token over the
-- owner-only socket, `token` for the API token over TCP; NULL for rules, expiry, withdrawal and
-- entries from before), and records the person's per-server controls, an entry that names only
-- its server.
ALTER TABLE audit_log ADD COLUMN via TEXT CHECK (via IS NULL OR via IN ('browser', 'cli', 'token'));
ALTER TABLE audit_log DROP CONSTRAINT audit_log_action_check;
ALTER TABLE audit_log DROP CONSTRAINT audit_log_subject_check;
ALTER TABLE audit_log
    ADD CONSTRAINT audit_log_action_check CHECK (action IN ('approved', 'edited', 'regenerated', 'rejected', 'auto_approved', 'delivered', 'answered', 'declined', 'cancelled', 'opened', 'rule_created', 'rule_revoked', 'tool_allowed', 'tool_denied', 'tool_accepted', 'tool_edited', 'tool_declined', 'tool_expired', 'grant_made', 'grant_revoked', 'server_paused', 'server_resumed', 'server_blocked', 'server_unblocked', 'server_muted', 'server_unmuted')),
    ADD CONSTRAINT audit_log_subject_check CHECK (question_id IS NOT NULL OR rule_id IS NOT NULL OR tool IS NOT NULL OR action LIKE 'server\_%');
