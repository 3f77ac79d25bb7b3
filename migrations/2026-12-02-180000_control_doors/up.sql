-- Through which door a server's controls were last set (`set_via`): `browser` for the
-- person's session, `cli` for the API token over the owner-only socket, `token` for the API
-- token over TCP, whose controls in force are bounded in number. NULL for controls from
-- before it was recorded (counted as the person's).
ALTER TABLE server_controls ADD COLUMN set_via TEXT CHECK (set_via IS NULL OR set_via IN ('browser', 'cli', 'token'));
