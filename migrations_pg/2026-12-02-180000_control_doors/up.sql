-- As migrations/2026-12-02-180000_control_doors makes it on SQLite: through which door a
-- server's controls were last set (`browser`, `cli` or `token`: the API token over TCP).
ALTER TABLE server_controls ADD COLUMN set_via TEXT CHECK (set_via IS NULL OR set_via IN ('browser', 'cli', 'token'));
