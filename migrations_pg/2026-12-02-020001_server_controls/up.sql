-- The person's per-server controls from the queue (pause, block, muted notices), as
-- migrations/2026-12-02-020001_server_controls makes them on SQLite; shared, like the queue
-- they act on. A server without a row has none of them.
CREATE TABLE server_controls (
    server TEXT PRIMARY KEY NOT NULL,
    paused_until BIGINT,
    blocked INTEGER NOT NULL DEFAULT 0 CHECK (blocked IN (0, 1)),
    muted INTEGER NOT NULL DEFAULT 0 CHECK (muted IN (0, 1)),
    updated_at BIGINT NOT NULL
);
