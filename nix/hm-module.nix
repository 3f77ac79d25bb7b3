# home-manager module: `services.mcp-consent` runs `mcp-consent serve` as a systemd user
# service on Linux and as a launchd agent on macOS, from one set of options. The unit and the
# agent carry the same content as `mcp-consent service print systemd|launchd` (server/service.rs).
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

  # One word of a systemd setting, quoted like server/service.rs does: `%` starts a specifier
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
    if builtins.match "[A-Za-z0-9/._:+@,=-]+" word != null then escaped else "\"${escaped}\"";

  passphraseEnv = lib.optionalAttrs (cfg.passphraseHashFile != null) {
    MCP_CONSENT_PASSPHRASE_HASH_FILE = toString cfg.passphraseHashFile;
  };
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
      type = lib.types.nullOr lib.types.path;
      default = null;
      example = "/run/secrets/mcp-consent-passphrase-hash";
      description = "File holding the argon2id hash of the login passphrase, handed to the service as MCP_CONSENT_PASSPHRASE_HASH_FILE so no secret lands in the Nix store (give a string, not a Nix path literal, which would be copied into the store). The service then also accepts this passphrase at /login (make the hash with `mcp-consent passwd --output FILE`).";
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
      description = "Other keys of config.toml (see the README, Configuration), written to `xdg.configFile.\"mcp-consent/config.toml\"`. Set `listen` and the retention bounds with their own options.";
    };
  };

  config = lib.mkIf cfg.enable {
    assertions = [
      {
        assertion = !(cfg.settings ? listen || cfg.settings ? retention);
        message = "services.mcp-consent: set `listen` and `retention.*` with their own options, not in `settings`.";
      }
    ];

    xdg.configFile."mcp-consent/config.toml".source = configFile;

    # ReadWritePaths= needs the state directory to exist; launchd needs the log directory.
    home.activation.mcp-consent-dirs =
      lib.hm.dag.entryBetween [ "reloadSystemd" "setupLaunchAgents" ] [ "writeBoundary" ]
        ''
          run mkdir -p -m 0700 ${lib.escapeShellArg (if isDarwin then logsDir else systemdStateDir)}
        '';

    systemd.user.services.mcp-consent = {
      Unit = {
        Description = "mcp-consent: review MCP sampling and elicitation requests";
        X-Restart-Triggers = [ "${configFile}" ];
      };
      Service = {
        Type = "exec";
        ExecStart = lib.concatMapStringsSep " " (systemdQuote true) (
          [ (lib.getExe cfg.package) ] ++ serveArgs systemdStateDir
        );
        Environment = lib.mapAttrsToList (n: v: systemdQuote false "${n}=${v}") passphraseEnv;
        Restart = "on-failure";
        RestartSec = "5s";
        UMask = "0077";
        NoNewPrivileges = "yes";
        LockPersonality = "yes";
        MemoryDenyWriteExecute = "yes";
        RestrictRealtime = "yes";
        RestrictSUIDSGID = "yes";
        RestrictNamespaces = "yes";
        RestrictAddressFamilies = "AF_UNIX AF_INET AF_INET6";
        SystemCallArchitectures = "native";
        SystemCallFilter = "@system-service";
        SystemCallErrorNumber = "EPERM";
        # Namespace options work in a user manager only inside a user namespace.
        PrivateUsers = "yes";
        PrivateTmp = "yes";
        PrivateDevices = "yes";
        ProtectSystem = "strict";
        ProtectHome = "read-only";
        ReadWritePaths = systemdQuote false systemdStateDir;
        ProtectKernelTunables = "yes";
        ProtectKernelModules = "yes";
        ProtectKernelLogs = "yes";
        ProtectHostname = "yes";
      };
      Install.WantedBy = [ "default.target" ];
    };

    launchd.agents.mcp-consent = {
      enable = true;
      config = {
        Label = "mcp-consent";
        ProgramArguments = [ (lib.getExe cfg.package) ] ++ serveArgs cfg.stateDir;
        EnvironmentVariables = lib.mkIf (passphraseEnv != { }) passphraseEnv;
        RunAtLoad = true;
        KeepAlive = {
          Crashed = true;
          SuccessfulExit = false;
        };
        ProcessType = "Background";
        Umask = 63; # 077: property lists have no octal
        StandardOutPath = "${logsDir}/stdout.log";
        StandardErrorPath = "${logsDir}/stderr.log";
      };
    };
  };
}
