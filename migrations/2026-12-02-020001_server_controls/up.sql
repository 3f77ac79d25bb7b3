-- The person's per-server controls from the queue: a pause (new requests refused until a
-- time), a block (refused until lifted) and muted notices (questions still open, no notice is
-- sent). A server without a row has none of them.
CREATE TABLE server_controls (
    server TEXT PRIMARY KEY NOT NULL,
    paused_until BIGINT,
    blocked INTEGER NOT NULL DEFAULT 0 CHECK (blocked IN (0, 1)),
    muted INTEGER NOT NULL DEFAULT 0 CHECK (muted IN (0, 1)),
    updated_at BIGINT NOT NULL
);
