-- When the person opened a URL question's link through /questions/{id}/open (consent).
ALTER TABLE questions ADD COLUMN opened_at BIGINT;
