DROP TABLE auto_approve_rules;
DROP TABLE audit_log;
DROP TABLE approvals;
DROP TABLE sampling_runs;
DROP TABLE sampling_revisions;
DROP TABLE questions;
