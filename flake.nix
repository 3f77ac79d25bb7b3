{
  description = "mcp-consent: the human trust boundary for MCP sampling and elicitation requests";

  # flake.lock pins crane, flake-utils (and its systems) and home-manager; nixpkgs is not in it
  # yet, so the first `nix flake lock` adds it (see docs/service.md).
  inputs = {
    nixpkgs.url = "github:NixOS/nixpkgs/nixos-unstable";
    crane.url = "github:ipetkov/crane";
    flake-utils.url = "github:numtide/flake-utils";
    # Only for the module evaluation check.
    home-manager = {
      url = "github:nix-community/home-manager";
      inputs.nixpkgs.follows = "nixpkgs";
    };
  };

  outputs =
    {
      self,
      nixpkgs,
      crane,
      flake-utils,
      home-manager,
    }:
    let
      # The module with its package defaulting to this flake's. `key` lets the module system
      # see that `homeManagerModules.default` and `homeModules.default` are one module, so a
      # configuration importing both gets it once instead of "defined multiple times".
      hmModule = {
        _file = "${toString ./flake.nix}#homeManagerModules.default";
        key = "mcp-consent/flake.nix#homeManagerModules.default";
        imports = [
          ./nix/hm-module.nix
          (
            { lib, pkgs, ... }:
            {
              services.mcp-consent.package =
                lib.mkDefault
                  self.packages.${pkgs.stdenv.hostPlatform.system}.default;
            }
          )
        ];
      };
    in
    flake-utils.lib.eachSystem
      [
        "x86_64-linux"
        "aarch64-linux"
        # x86_64-darwin is left out: nixpkgs no longer supports it.
        "aarch64-darwin"
      ]
      (
        system:
        let
          pkgs = nixpkgs.legacyPackages.${system};
          inherit (pkgs) lib;
          craneLib = crane.mkLib pkgs;
          mcp-consent = pkgs.callPackage ./nix/package.nix { inherit craneLib; };
          inherit (mcp-consent.passthru) checkArgs testArgs;
          serve = pkgs.writeShellScript "mcp-consent-serve" ''
            exec ${lib.getExe mcp-consent} serve "$@"
          '';
        in
        {
          packages = {
            default = mcp-consent;
            inherit mcp-consent;
          };

          # `nix run` starts the service on the default state directory.
          apps.default = {
            type = "app";
            program = "${serve}";
            meta.description = "Run mcp-consent serve";
          };

          checks = {
            package = mcp-consent;
            clippy = craneLib.cargoClippy (
              checkArgs
              // {
                cargoClippyExtraArgs = "--all-targets -- --deny warnings";
              }
            );
            fmt = craneLib.cargoFmt { inherit (checkArgs) src; };
            tests = craneLib.cargoTest testArgs;
          }
          // lib.optionalAttrs pkgs.stdenv.hostPlatform.isLinux {
            hm-module = import ./nix/tests/hm-module.nix {
              inherit pkgs home-manager;
              module = hmModule;
              package = mcp-consent;
            };
          };

          devShells.default = craneLib.devShell {
            checks = self.checks.${system};
            packages = [
              pkgs.diesel-cli
              pkgs.sqlite
              pkgs.nodejs
              pkgs.python3
            ];
          };

          formatter = pkgs.nixfmt-tree;
        }
      )
    // {
      homeManagerModules.default = hmModule;
      homeModules.default = hmModule;
    };
}
