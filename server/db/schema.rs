// @generated automatically by Diesel CLI.

diesel::table! {
    api_tokens (token_sha256) {
        token_sha256 -> Text,
        created_at -> BigInt,
    }
}

diesel::table! {
    approvals (approval_id) {
        approval_id -> Text,
        question_id -> Text,
        phase -> Text,
        revision -> Integer,
        run_id -> Nullable<Text>,
        decision -> Text,
        model_id -> Nullable<Text>,
        actor -> Text,
        created_at -> BigInt,
    }
}

diesel::table! {
    audit_log (seq) {
        seq -> Integer,
        at -> BigInt,
        actor -> Text,
        action -> Text,
        question_id -> Nullable<Text>,
        server -> Text,
        model_id -> Nullable<Text>,
        input_tokens -> Nullable<BigInt>,
        output_tokens -> Nullable<BigInt>,
        cost_usd -> Nullable<Double>,
        request_digest -> Nullable<Text>,
        response_digest -> Nullable<Text>,
        kind -> Nullable<Text>,
        rule_id -> Nullable<Text>,
        tool -> Nullable<Text>,
        via -> Nullable<Text>,
    }
}

diesel::table! {
    auto_approve_rules (id) {
        id -> Text,
        server -> Text,
        scope -> Text,
        author -> Text,
        reason -> Text,
        created_at -> BigInt,
        expires_at -> BigInt,
        revoked_at -> Nullable<BigInt>,
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
        revision -> Integer,
        conversation -> Nullable<Text>,
        tool_info -> Nullable<Text>,
        opened_via -> Nullable<Text>,
    }
}

diesel::table! {
    sampling_revisions (question_id, revision) {
        question_id -> Text,
        revision -> Integer,
        params -> Text,
        author -> Text,
        created_at -> BigInt,
    }
}

diesel::table! {
    sampling_runs (id) {
        id -> Text,
        question_id -> Text,
        revision -> Integer,
        model_id -> Text,
        receipt -> Text,
        state -> Text,
        result -> Nullable<Text>,
        error -> Nullable<Text>,
        input_tokens -> Nullable<BigInt>,
        output_tokens -> Nullable<BigInt>,
        cost_usd -> Nullable<Double>,
        started_at -> BigInt,
        finished_at -> Nullable<BigInt>,
    }
}

diesel::table! {
    server_controls (server) {
        server -> Text,
        paused_until -> Nullable<BigInt>,
        blocked -> Integer,
        muted -> Integer,
        updated_at -> BigInt,
        set_via -> Nullable<Text>,
    }
}

diesel::table! {
    tool_grants (id) {
        id -> Text,
        server -> Text,
        tool -> Text,
        created_at -> BigInt,
        expires_at -> Nullable<BigInt>,
        revoked_at -> Nullable<BigInt>,
    }
}

diesel::table! {
    web_sessions (id_sha256) {
        id_sha256 -> Text,
        csrf_token -> Text,
        created_at -> BigInt,
        expires_at -> BigInt,
        last_used_at -> BigInt,
        label -> Text,
    }
}

diesel::joinable!(approvals -> questions (question_id));
diesel::joinable!(sampling_revisions -> questions (question_id));
diesel::joinable!(sampling_runs -> questions (question_id));

diesel::allow_tables_to_appear_in_same_query!(
    api_tokens,
    approvals,
    audit_log,
    auto_approve_rules,
    login_links,
    questions,
    sampling_revisions,
    sampling_runs,
    server_controls,
    tool_grants,
    web_sessions,
);
