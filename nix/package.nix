# The mcp-consent binary, built with crane from Cargo.lock. `craneLib` comes from the flake
# (crane.mkLib pkgs). The derivations the flake's checks reuse (dependency artifacts, the
# arguments for clippy and the tests) are passed through so nothing is built twice.
{
  lib,
  stdenv,
  craneLib,
  libpq,
  postgresql,
  python3,
  prometheus,
  systemd,
}:
let
  # What the binary is compiled from: the crate's sources, templates/ and static/ (askama,
  # include_str!, including templates/units/service.toml, the unit's fixed part), i18n/ (the
  # message catalogues, include_str!) and
  # migrations/ and migrations_pg/ (embed_migrations!), and the license files it ships. Tests, benches, the fuzz
  # crate and the Nix files are left out, so editing them does not rebuild the package.
  packageFiles = lib.fileset.unions [
    ../Cargo.toml
    ../Cargo.lock
    ../build.rs
    ../server
    ../templates
    ../static
    ../i18n
    ../migrations
    ../migrations_pg
    ../LICENSE-MIT
    ../LICENSE-APACHE
  ];
  src = lib.fileset.toSource {
    root = ../.;
    fileset = packageFiles;
  };

  # What clippy, rustfmt and the tests see besides: the integration tests (with the scripted
  # MCP server tests/integration/fake_server.py), the bench, clippy.toml, and the module that
  # tests/integration/nix_module.rs reads. tests/e2e is run by its own script, not by cargo.
  checkSrc = lib.fileset.toSource {
    root = ../.;
    fileset = lib.fileset.unions [
      packageFiles
      ../tests/integration
      ../benches
      ../clippy.toml
      ./hm-module.nix
    ];
  };

  commonArgs = {
    inherit src;
    strictDeps = true;
    # The PostgreSQL client library diesel links for the shared store.
    buildInputs = [ libpq ];
    pname = "mcp-consent";
    version = (lib.importTOML ../Cargo.toml).package.version;
  };

  # Dependencies only: crane replaces every target (the declared test and bench included) by a
  # stub, so this builds from Cargo.toml and Cargo.lock alone and serves all checks.
  cargoArtifacts = craneLib.buildDepsOnly commonArgs;

  checkArgs = commonArgs // {
    inherit cargoArtifacts;
    src = checkSrc;
  };

  # The integration tests run the proxy against a Python script, parse plists with Python,
  # check /metrics with promtool (the `cli` output of nixpkgs' prometheus) and, on Linux, verify
  # the systemd unit with systemd-analyze. Tests that need a Linux-only tool say so with
  # `#[cfg_attr(not(target_os = "linux"), ignore = "…")]`, so nothing is skipped by name here.
  testArgs =
    checkArgs
    // {
      nativeCheckInputs = [
        python3
        # initdb, pg_ctl and psql for the shared-queue tests' temporary cluster.
        postgresql
        (lib.getOutput "cli" prometheus)
      ]
      ++ lib.optional stdenv.hostPlatform.isLinux systemd;
      # The tests talk to the service on 127.0.0.1; macOS's sandbox blocks loopback otherwise.
      __darwinAllowLocalNetworking = true;
    }
    // lib.optionalAttrs stdenv.hostPlatform.isLinux {
      # nixpkgs' systemd keeps its units (basic.target, default.target…) under example/, out of
      # the default lookup path, so `systemd-analyze verify --user` needs to be told where.
      SYSTEMD_UNIT_PATH = "${systemd}/example/systemd/user";
    };
in
craneLib.buildPackage (
  commonArgs
  // {
    inherit cargoArtifacts;
    # Cargo.toml declares the integration test and the bench, and cargo refuses a manifest
    # whose targets are missing: empty stand-ins replace them in the package's source.
    postPatch = ''
      mkdir -p tests/integration benches
      echo 'fn main() {}' > tests/integration/main.rs
      echo 'fn main() {}' > benches/validate.rs
    '';
    # The tests run once, in the flake's `tests` check (craneLib.cargoTest with testArgs).
    doCheck = false;
    postInstall = ''
      install -Dm644 -t $out/share/licenses/mcp-consent LICENSE-MIT LICENSE-APACHE
    '';
    passthru = {
      inherit
        commonArgs
        cargoArtifacts
        checkArgs
        testArgs
        ;
    };
    meta = {
      description = "The human trust boundary for MCP sampling and elicitation requests";
      # The address docs/service.md gives; OWNER is filled in where the repository is published.
      homepage = "https://github.com/OWNER/mcp-consent";
      license = with lib.licenses; [
        mit
        asl20
      ];
      mainProgram = "mcp-consent";
      platforms = lib.platforms.linux ++ lib.platforms.darwin;
    };
  }
)
