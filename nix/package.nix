# The mcp-consent binary, built with crane from Cargo.lock. `craneLib` comes from the flake
# (crane.mkLib pkgs). The derivations the flake's checks reuse (dependency artifacts, the
# shared arguments) are passed through so nothing is built twice.
{
  lib,
  stdenv,
  craneLib,
  python3,
  systemd,
}:
let
  root = ../.;

  # crane's Cargo source filter keeps only Rust and Cargo files. The binary also compiles in
  # templates/ and static/ (askama, include_str!) and migrations/ (embed_migrations!); the
  # tests read tests/integration/fake_server.py and nix/hm-module.nix.
  src = lib.fileset.toSource {
    inherit root;
    fileset = lib.fileset.unions [
      (craneLib.fileset.commonCargoSources root)
      ../clippy.toml
      ../templates
      ../static
      ../migrations
      ../tests/integration/fake_server.py
      ./hm-module.nix
    ];
  };

  commonArgs = {
    inherit src;
    strictDeps = true;
    pname = "mcp-consent";
    version = (lib.importTOML ../Cargo.toml).package.version;
  };

  cargoArtifacts = craneLib.buildDepsOnly commonArgs;

  # The integration tests run the proxy against a Python script, parse plists with Python and
  # verify the systemd unit with systemd-analyze (Linux only; the darwin check skips those).
  testArgs = commonArgs // {
    inherit cargoArtifacts;
    nativeCheckInputs = [ python3 ] ++ lib.optional stdenv.hostPlatform.isLinux systemd;
    cargoTestExtraArgs = lib.optionalString (!stdenv.hostPlatform.isLinux) "-- --skip service::systemd --skip service::install_writes";
  };
in
craneLib.buildPackage (
  commonArgs
  // {
    inherit cargoArtifacts;
    # The tests run once, in the flake's `tests` check (craneLib.cargoTest with testArgs).
    doCheck = false;
    passthru = {
      inherit commonArgs cargoArtifacts testArgs;
    };
    meta = {
      description = "The human trust boundary for MCP sampling and elicitation requests";
      license = with lib.licenses; [
        mit
        asl20
      ];
      mainProgram = "mcp-consent";
      platforms = lib.platforms.linux ++ lib.platforms.darwin;
    };
  }
)
