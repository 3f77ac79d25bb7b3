//! Re-run the build when migrations or templates change: `embed_migrations!` and askama do not
//! notice added files on their own.
fn main() {
    println!("cargo:rerun-if-changed=migrations");
    println!("cargo:rerun-if-changed=templates");
    println!("cargo:rerun-if-changed=static");
}
