DROP INDEX questions_pending_expiry;
DROP INDEX questions_pending_created;
