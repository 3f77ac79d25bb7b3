# home-manager module: `services.mcp-consent` runs `mcp-consent serve` as a systemd user
# service on Linux and as a launchd agent on macOS, from one set of options. The unit and the
# agent carry the same content as `mcp-consent service print systemd|launchd`: their fixed part
# (hardening, restart policy, keep-alive) is read from templates/units/service.toml, the file
# the binary compiles in, and this module adds only the per-user lines (server/cli/service/ adds
# the same ones), the restart trigger and the passphrase environment.
#
# The option names and defaults under `settings`, `listen` and `retention` mirror the config
# keys of server/config.rs; tests/integration/nix_module.rs reads this file and checks them
# against the binary, so keep one option per line in the form `name = lib.mkOption {` with its
# `default = …;` inside.
{
  config,
  lib,
  pkgs,
  ...
}:
let
  cfg = config.services.mcp-consent;
  tomlFormat = pkgs.formats.toml { };
  inherit (pkgs.stdenv.hostPlatform) isDarwin;
  fixed = lib.importTOML ../templates/units/service.toml;

  # The config file as the binary reads it: free-form settings plus the typed options.
  configFile = tomlFormat.generate "mcp-consent-config.toml" (
    cfg.settings
    // {
      listen = cfg.listen;
      retention = {
        max_age_days = cfg.retention.maxAgeDays;
        max_terminal = cfg.retention.maxTerminal;
        interval_secs = cfg.retention.intervalSecs;
      };
    }
    # The shared database (docs/scale.md): its URL, never a password, and the password's file.
    // lib.optionalAttrs (cfg.databaseUrl != null) { database_url = toString cfg.databaseUrl; }
    // lib.optionalAttrs (cfg.databasePasswordFile != null) {
      database_password_file = toString cfg.databasePasswordFile;
    }
  );
  configPath = "${config.xdg.configHome}/mcp-consent/config.toml";

  # The systemd unit always names its state directory: ProtectSystem=strict needs it listed
  # in ReadWritePaths. launchd only passes it when set, like the binary.
  systemdStateDir =
    if cfg.stateDir != null then cfg.stateDir else "${config.xdg.stateHome}/mcp-consent";
  logsDir = "${config.home.homeDirectory}/Library/Logs/mcp-consent";

  serveArgs =
    stateDir:
    [ "serve" ]
    ++ lib.optionals (stateDir != null) [
      "--state-dir"
      stateDir
    ]
    ++ [
      "--config"
      configPath
    ];

  # One word of a systemd setting, quoted like server/cli/service/mod.rs does: `%` starts a specifier
  # and `$` (in Exec lines) a variable, so both are doubled.
  systemdQuote =
    exec: word:
    let
      escaped =
        lib.replaceStrings
          ([ "\\" "\"" "%" ] ++ lib.optional exec "$")
          ([ "\\\\" "\\\"" "%%" ] ++ lib.optional exec "$$")
          word;
    in
    if builtins.match "[A-Za-z0-9/._:+@,=%-]+" word != null then escaped else "\"${escaped}\"";

  passphraseEnv = lib.optionalAttrs (cfg.passphraseHashFile != null) {
    MCP_CONSENT_PASSPHRASE_HASH_FILE = toString cfg.passphraseHashFile;
  };

  # A secret's location: an absolute path given as a string. A Nix path literal (`./hash`) is
  # refused because interpolating it would copy the secret into the world-readable store, and
  # so is a string that already points into the store.
  outsideStorePath =
    lib.types.addCheck (lib.types.strMatching "/.+") (
      p: !lib.hasPrefix "${builtins.storeDir}/" p
    )
    // {
      description = "absolute path outside the Nix store, as a string";
    };

  # launchd's domain for the agent: home-manager's `domain` option where it exists (newer
  # home-manager), else the `gui` domain it always used.
  agentTarget = "${config.launchd.agents.mcp-consent.domain or "gui"}/$(id -u)/mcp-consent";
in
{
  options.services.mcp-consent = {
    enable = lib.mkEnableOption "mcp-consent, the review service for MCP sampling and elicitation requests";

    package = lib.mkOption {
      type = lib.types.package;
      description = "The mcp-consent package. The flake's module sets it to the flake's package.";
    };

    listen = lib.mkOption {
      type = lib.types.str;
      default = "127.0.0.1:7777";
      example = "127.0.0.1:8787";
      description = "Address of the web UI and API (config key `listen`). Non-loopback addresses also need `settings.allow_non_loopback = true`.";
    };

    stateDir = lib.mkOption {
      type = lib.types.nullOr lib.types.str;
      default = null;
      example = "/home/alice/.local/state/mcp-consent";
      description = "State directory (store, API token, service URL), passed as `--state-dir`. Default: the binary's default, `$XDG_STATE_HOME/mcp-consent` (macOS: `~/Library/Application Support/mcp-consent`); the systemd unit names it explicitly as `xdg.stateHome`/mcp-consent. Clients (`mcp-consent login`, `proxy`) need the same directory.";
    };

    passphraseHashFile = lib.mkOption {
      type = lib.types.nullOr outsideStorePath;
      default = null;
      example = "/run/secrets/mcp-consent-passphrase-hash";
      description = "File holding the argon2id hash of the login passphrase, handed to the service as MCP_CONSENT_PASSPHRASE_HASH_FILE so no secret lands in the Nix store. An absolute path as a string: a Nix path literal or a store path is refused. The service then also accepts this passphrase at /login (make the hash with `mcp-consent passwd --output FILE`).";
    };

    databaseUrl = lib.mkOption {
      type = lib.types.nullOr (lib.types.strMatching "postgres(ql)?://.+");
      default = null;
      example = "postgres://alice@db.example.org:5432/mcp_consent?sslmode=verify-full";
      description = "PostgreSQL database to keep the questions in, shared with the mcp-consent of your other machines (config key `database_url`; see docs/scale.md). Written into the config file, which lives in the Nix store: give the password with `databasePasswordFile`, never in the URL. Default: none, and the embedded SQLite store.";
    };

    databasePasswordFile = lib.mkOption {
      type = lib.types.nullOr outsideStorePath;
      default = null;
      example = "/run/secrets/mcp-consent-db-password";
      description = "File holding the password for `databaseUrl` (config key `database_password_file`; owner-only and yours, a trailing newline is dropped). An absolute path as a string: a Nix path literal or a store path is refused, so the secret stays out of the store.";
    };

    sandbox = lib.mkOption {
      type = lib.types.bool;
      default = true;
      example = false;
      description = "Linux: run the unit with `PrivateUsers=yes` and the namespace options (`PrivateTmp`, `PrivateDevices`, `ProtectSystem=strict` with the state directory in `ReadWritePaths`, `ProtectHome=read-only`, `ProtectKernel*`, `ProtectHostname`). A user manager can set these up only inside a user namespace; on a kernel with unprivileged user namespaces turned off the unit fails with status `226/NAMESPACE`, and `false` leaves them out (like `mcp-consent service print systemd --no-sandbox`). The seccomp options stay either way.";
    };

    retention = {
      maxAgeDays = lib.mkOption {
        type = lib.types.ints.unsigned;
        default = 30;
        description = "Delete decided questions older than this many days (config key `retention.max_age_days`).";
      };
      maxTerminal = lib.mkOption {
        type = lib.types.ints.unsigned;
        default = 1000;
        description = "Keep at most this many decided questions (config key `retention.max_terminal`).";
      };
      intervalSecs = lib.mkOption {
        type = lib.types.ints.positive;
        default = 3600;
        description = "Seconds between pruning runs (config key `retention.interval_secs`).";
      };
    };

    settings = lib.mkOption {
      type = lib.types.submodule {
        freeformType = tomlFormat.type;
        options = {
          allow_non_loopback = lib.mkOption {
            type = lib.types.bool;
            default = false;
            description = "Allow `listen` on a non-loopback address.";
          };
          question_timeout_secs = lib.mkOption {
            type = lib.types.ints.positive;
            default = 900;
            description = "Seconds a question waits for an answer before it expires.";
          };
          max_request_bytes = lib.mkOption {
            type = lib.types.ints.positive;
            default = 16777216;
            description = "Largest body accepted when opening a question, in bytes.";
          };
        };
      };
      default = { };
      example = {
        question_timeout_secs = 300;
      };
      description = "Other keys of config.toml (see docs/configuration.md), written to `xdg.configFile.\"mcp-consent/config.toml\"`. Set `listen` and the retention bounds with their own options.";
    };
  };

  config = lib.mkIf cfg.enable {
    assertions = [
      {
        assertion = !(cfg.settings ? listen || cfg.settings ? retention);
        message = "services.mcp-consent: set `listen` and `retention.*` with their own options, not in `settings`.";
      }
    ];

    # `login`, `proxy` and `passwd` for the user the service runs for.
    home.packages = [ cfg.package ];

    xdg.configFile."mcp-consent/config.toml" = {
      source = configFile;
      # systemd restarts on X-Restart-Triggers; a launchd agent's plist does not change with
      # the config, so restart it here (it is not loaded yet on the first activation, when
      # setupLaunchAgents starts it with the new file anyway).
      onChange = lib.optionalString isDarwin ''
        run /bin/launchctl kickstart -k "${agentTarget}" 2>/dev/null || true
      '';
    };

    # ReadWritePaths= needs the state directory to exist; launchd needs the log directory.
    home.activation.mcp-consent-dirs =
      lib.hm.dag.entryBetween [ "reloadSystemd" "setupLaunchAgents" ] [ "writeBoundary" ]
        ''
          run mkdir -p -m 0700 ${lib.escapeShellArg (if isDarwin then logsDir else systemdStateDir)}
        '';

    # The fixed sections from templates/units/service.toml plus the per-user lines.
    systemd.user.services.mcp-consent = {
      Unit = fixed.systemd.Unit // {
        X-Restart-Triggers = [ "${configFile}" ];
      };
      Service =
        fixed.systemd.Service
        // lib.optionalAttrs cfg.sandbox (
          fixed.systemd.sandbox
          // {
            ReadWritePaths = systemdQuote false systemdStateDir;
          }
        )
        // {
          ExecStart = lib.concatMapStringsSep " " (systemdQuote true) (
            [ (lib.getExe cfg.package) ] ++ serveArgs systemdStateDir
          );
          Environment = lib.mapAttrsToList (n: v: systemdQuote false "${n}=${v}") passphraseEnv;
        };
      inherit (fixed.systemd) Install;
    };

    launchd.agents.mcp-consent = {
      enable = true;
      config = fixed.launchd // {
        Label = "mcp-consent";
        ProgramArguments = [ (lib.getExe cfg.package) ] ++ serveArgs cfg.stateDir;
        EnvironmentVariables = lib.mkIf (passphraseEnv != { }) passphraseEnv;
        StandardOutPath = "${logsDir}/stdout.log";
        StandardErrorPath = "${logsDir}/stderr.log";
      };
    };
  };
}
