ALTER TABLE web_sessions DROP COLUMN label;
ALTER TABLE web_sessions DROP COLUMN last_used_at;
