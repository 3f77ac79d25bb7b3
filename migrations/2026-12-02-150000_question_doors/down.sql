ALTER TABLE questions DROP COLUMN opened_via;
