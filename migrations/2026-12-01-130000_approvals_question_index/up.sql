-- Deleting a question deletes its approvals (ON DELETE CASCADE), and SQLite finds them by
-- `question_id`: without an index every deleted question scanned the whole approvals table,
-- so pruning many sampling questions grew with the product of the two tables' sizes.
CREATE INDEX approvals_question ON approvals (question_id);
