-- The sessions page lists each browser's session: when it was last used and a short label
-- (browser and system family from its User-Agent, never a secret). Sessions from before keep
-- working; their last use starts as their creation.
ALTER TABLE web_sessions ADD COLUMN last_used_at BIGINT NOT NULL DEFAULT 0;
ALTER TABLE web_sessions ADD COLUMN label TEXT NOT NULL DEFAULT '';
UPDATE web_sessions SET last_used_at = created_at;
