-- Questions: one row per request held for an answer. Times are Unix milliseconds (UTC).
CREATE TABLE questions (
    id TEXT PRIMARY KEY NOT NULL,             -- UUIDv7, time-ordered
    kind TEXT NOT NULL,                       -- sampling | form | url
    server TEXT NOT NULL,                     -- the proxy's --name
    session TEXT NOT NULL,                    -- one proxy run
    tool TEXT,                                -- the host's tools/call that led to it, when known
    audience TEXT NOT NULL,                   -- human | agent
    state TEXT NOT NULL,                      -- pending | accepted | declined | cancelled | expired | withdrawn | completed
    phase TEXT,                               -- sampling only, while pending
    protocol_version TEXT NOT NULL,           -- as negotiated
    era TEXT NOT NULL,                        -- the revision it is judged by
    client_capabilities TEXT NOT NULL,        -- JSON, as forwarded to the server
    rpc_id TEXT NOT NULL,                     -- JSON of the JSON-RPC id
    request TEXT NOT NULL,                    -- JSON params as sent
    response TEXT,                            -- JSON-RPC response, once decided
    elicitation_id TEXT,                      -- URL mode
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    decided_at BIGINT
);
-- Re-posting the same request while it is pending returns the open question.
CREATE UNIQUE INDEX questions_pending_request ON questions (server, session, rpc_id) WHERE state = 'pending';
CREATE INDEX questions_state_created ON questions (state, created_at);
CREATE INDEX questions_decided ON questions (decided_at, id) WHERE decided_at IS NOT NULL;

-- Local API tokens; only a SHA-256 digest is kept.
CREATE TABLE api_tokens (
    token_sha256 TEXT PRIMARY KEY NOT NULL,
    created_at BIGINT NOT NULL
);

-- One-time login links printed by `mcp-consent login`.
CREATE TABLE login_links (
    token_sha256 TEXT PRIMARY KEY NOT NULL,
    expires_at BIGINT NOT NULL
);

-- Browser sessions; the cookie holds the secret, the table its digest.
CREATE TABLE web_sessions (
    id_sha256 TEXT PRIMARY KEY NOT NULL,
    csrf_token TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
);
