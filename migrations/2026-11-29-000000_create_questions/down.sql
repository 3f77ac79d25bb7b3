DROP TABLE web_sessions;
DROP TABLE login_links;
DROP TABLE api_tokens;
DROP TABLE questions;
