# Evaluates a home-manager configuration with services.mcp-consent enabled (Linux), once with
# the sandbox and once with `sandbox = false`, and checks the generated files: each unit
# verifies with systemd-analyze and carries the same lines as `mcp-consent service print
# systemd` (with `--no-sandbox` for the second) for the same options, and the config file holds
# the retention bounds and settings.
{
  pkgs,
  home-manager,
  module,
  package,
}:
let
  homeFiles =
    options:
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
            }
            // options;
          }
        ];
      };
    in
    "${home.activationPackage}/home-files";
  sandboxed = homeFiles { };
  unsandboxed = homeFiles { sandbox = false; };
in
pkgs.runCommand "mcp-consent-hm-module"
  {
    nativeBuildInputs = [
      pkgs.systemd
      pkgs.gnugrep
    ];
    # nixpkgs' systemd keeps basic.target and default.target here, out of the default path.
    SYSTEMD_UNIT_PATH = "${pkgs.systemd}/example/systemd/user";
  }
  ''
    export XDG_RUNTIME_DIR=$(mktemp -d)
    verify() {
      # It warns on stderr with exit status 0 about unknown keys: any output is a failure.
      if ! systemd-analyze verify --user "$1" 2> verify.err || [ -s verify.err ]; then
        echo "systemd-analyze verify --user $1 failed:" >&2
        cat verify.err >&2
        exit 1
      fi
    }
    # The unit's lines, minus comments, section headers and what only the module adds.
    keys() { grep -v -e '^#' -e '^\[' -e '^$' -e '^X-Restart-Triggers=' -e '^Environment=' "$1" | sort; }
    # compare UNIT [ARGS…]: the module's unit against the binary's for the same options.
    compare() {
      unit=$1
      shift
      cat "$unit"
      verify "$unit"
      grep -qx 'Environment=MCP_CONSENT_PASSPHRASE_HASH_FILE=/run/secrets/mcp-consent-hash' "$unit"
      HOME=/home/alice XDG_STATE_HOME=/home/alice/.local/state \
        ${package}/bin/mcp-consent service print systemd \
        --config /home/alice/.config/mcp-consent/config.toml "$@" > expected.service
      keys expected.service > expected
      keys "$unit" > actual
      diff -u expected actual
    }

    compare ${sandboxed}/.config/systemd/user/mcp-consent.service
    grep -qx 'PrivateUsers=yes' ${sandboxed}/.config/systemd/user/mcp-consent.service
    compare ${unsandboxed}/.config/systemd/user/mcp-consent.service --no-sandbox
    # (`! grep` would not stop the script under set -e.)
    if grep -e '^PrivateUsers=' -e '^ReadWritePaths=' ${unsandboxed}/.config/systemd/user/mcp-consent.service; then
      exit 1
    fi

    config=${sandboxed}/.config/mcp-consent/config.toml
    grep -qx 'max_age_days = 7' "$config"
    grep -qx 'question_timeout_secs = 60' "$config"
    grep -qx 'listen = "127.0.0.1:7777"' "$config"

    touch $out
  ''
