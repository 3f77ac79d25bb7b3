-- Sampling tool loops: a request continuing a delivered tool_use belongs to the same
-- conversation (the id of its first question).
ALTER TABLE questions ADD COLUMN conversation TEXT;
CREATE INDEX questions_conversation ON questions (conversation);
