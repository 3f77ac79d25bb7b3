# Evaluates a home-manager configuration with services.mcp-consent enabled (Linux) and checks
# the generated files: the unit verifies with systemd-analyze, carries the same settings as
# `mcp-consent service print systemd` for the same options, and the config file holds the
# retention bounds and settings.
{
  pkgs,
  home-manager,
  module,
  package,
}:
let
  home = home-manager.lib.homeManagerConfiguration {
    inherit pkgs;
    modules = [
      module
      {
        home = {
          username = "alice";
          homeDirectory = "/home/alice";
          stateVersion = "24.11";
        };
        services.mcp-consent = {
          enable = true;
          inherit package;
          retention.maxAgeDays = 7;
          settings.question_timeout_secs = 60;
          passphraseHashFile = "/run/secrets/mcp-consent-hash";
        };
      }
    ];
  };
  files = "${home.activationPackage}/home-files";
in
pkgs.runCommand "mcp-consent-hm-module"
  {
    nativeBuildInputs = [
      pkgs.systemd
      pkgs.gnugrep
    ];
  }
  ''
    unit=${files}/.config/systemd/user/mcp-consent.service
    config=${files}/.config/mcp-consent/config.toml
    cat "$unit"

    export XDG_RUNTIME_DIR=$(mktemp -d)
    systemd-analyze verify --user "$unit" 2> verify.err
    if [ -s verify.err ]; then cat verify.err; exit 1; fi

    grep -qx 'Environment=MCP_CONSENT_PASSPHRASE_HASH_FILE=/run/secrets/mcp-consent-hash' "$unit"
    grep -qx 'max_age_days = 7' "$config"
    grep -qx 'question_timeout_secs = 60' "$config"
    grep -qx 'listen = "127.0.0.1:7777"' "$config"

    # The same unit from the binary, for the same options, minus what only the module adds.
    HOME=/home/alice XDG_STATE_HOME=/home/alice/.local/state \
      ${package}/bin/mcp-consent service print systemd \
      --config /home/alice/.config/mcp-consent/config.toml > expected.service
    keys() { grep -v -e '^#' -e '^\[' -e '^$' -e '^X-Restart-Triggers=' -e '^Environment=' "$1" | sort; }
    keys expected.service > expected
    keys "$unit" > actual
    diff -u expected actual

    touch $out
  ''
