//! Background jobs of the service: retention (pruning decided questions, expired logins and old
//! audit entries). The expiry sweep lives with the broker (`Broker::expire_due`) and is ticked
//! by `app`.

pub mod retention;
