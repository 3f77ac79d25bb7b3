-- As migrations/2026-12-02-150000_question_doors makes it on SQLite: through which door a
-- question was opened (`cli`: the owner-only socket, `token`: the API token over TCP).
ALTER TABLE questions ADD COLUMN opened_via TEXT CHECK (opened_via IS NULL OR opened_via IN ('cli', 'token'));
