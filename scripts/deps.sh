#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs the Debian packages listed in scripts/packages.txt that are missing; a quick no-op
# when everything is there. Non-interactive, for `make deps` (root) and CI.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
missing=()
while read -r pkg _; do
	case "$pkg" in ''|'#'*) continue ;; esac
	st=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
	[ "$st" = "install ok installed" ] || missing+=("$pkg")
done < "$here/packages.txt"
if [ ${#missing[@]} -gt 0 ]; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "deps: missing packages: ${missing[*]}; run 'sudo make deps'" >&2
		exit 1
	fi
	echo "deps: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# npm packages for the browser tests, installed once into the build folder
if [ -n "${NPM_PREFIX:-}" ] && [ -f "$here/../tests/browser/package.json" ]; then
	# (re)install when package.json changed since the last install
	if [ ! -d "$NPM_PREFIX/node_modules/playwright-core" ] ||
		! cmp -s "$here/../tests/browser/package.json" "$NPM_PREFIX/package.json"; then
		command -v npm >/dev/null || { export DEBIAN_FRONTEND=noninteractive; apt-get install -y -qq npm >/dev/null; }
		mkdir -p "$NPM_PREFIX"
		cp "$here/../tests/browser/package.json" "$NPM_PREFIX/"
		(cd "$NPM_PREFIX" && npm install --no-audit --no-fund --silent >/dev/null)
	fi
fi
exit 0
