DROP TABLE server_controls;
