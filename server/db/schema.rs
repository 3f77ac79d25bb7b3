// @generated-style: mirrors migrations/ (diesel print-schema layout); keep in step with them.

diesel::table! {
    api_tokens (token_sha256) {
        token_sha256 -> Text,
        created_at -> BigInt,
    }
}

diesel::table! {
    login_links (token_sha256) {
        token_sha256 -> Text,
        expires_at -> BigInt,
    }
}

diesel::table! {
    questions (id) {
        id -> Text,
        kind -> Text,
        server -> Text,
        session -> Text,
        tool -> Nullable<Text>,
        audience -> Text,
        state -> Text,
        phase -> Nullable<Text>,
        protocol_version -> Text,
        era -> Text,
        client_capabilities -> Text,
        rpc_id -> Text,
        request -> Text,
        response -> Nullable<Text>,
        elicitation_id -> Nullable<Text>,
        created_at -> BigInt,
        expires_at -> BigInt,
        decided_at -> Nullable<BigInt>,
        opened_at -> Nullable<BigInt>,
    }
}

diesel::table! {
    web_sessions (id_sha256) {
        id_sha256 -> Text,
        csrf_token -> Text,
        created_at -> BigInt,
        expires_at -> BigInt,
    }
}

diesel::allow_tables_to_appear_in_same_query!(api_tokens, login_links, questions, web_sessions);
