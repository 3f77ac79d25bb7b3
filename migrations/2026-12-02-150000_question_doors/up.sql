-- Through which door a question was opened (`opened_via`): `cli` for the API token over the
-- owner-only socket (a proxy on this computer), `token` for the API token over TCP (a proxy
-- given `--broker URL`, or anyone holding the token). NULL for questions from before.
ALTER TABLE questions ADD COLUMN opened_via TEXT CHECK (opened_via IS NULL OR opened_via IN ('cli', 'token'));
