{
  description = "mcp-consent: the human trust boundary for MCP sampling and elicitation requests";

  # No flake.lock is committed yet: create it with `nix flake lock` (see README, "Run as a
  # service").
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
      # The module itself needs a package; from this flake it defaults to ours.
      hmModule =
        { lib, pkgs, ... }:
        {
          imports = [ ./nix/hm-module.nix ];
          services.mcp-consent.package =
            lib.mkDefault
              self.packages.${pkgs.stdenv.hostPlatform.system}.default;
        };
    in
    flake-utils.lib.eachSystem
      [
        "x86_64-linux"
        "aarch64-linux"
        "aarch64-darwin"
        "x86_64-darwin"
      ]
      (
        system:
        let
          pkgs = nixpkgs.legacyPackages.${system};
          inherit (pkgs) lib;
          craneLib = crane.mkLib pkgs;
          mcp-consent = pkgs.callPackage ./nix/package.nix { inherit craneLib; };
          inherit (mcp-consent.passthru) commonArgs cargoArtifacts testArgs;
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
              commonArgs
              // {
                inherit cargoArtifacts;
                cargoClippyExtraArgs = "--all-targets -- --deny warnings";
              }
            );
            fmt = craneLib.cargoFmt { inherit (commonArgs) src; };
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
