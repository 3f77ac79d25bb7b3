ALTER TABLE server_controls DROP COLUMN set_via;
