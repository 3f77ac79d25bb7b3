DROP INDEX questions_conversation;
ALTER TABLE questions DROP COLUMN conversation;
