#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Dependencies point one way (docs/architecture.md), as rules on folders, so that a new file is
# covered by where it lives:
#
#   core:   src/core/<part>/ and include/ember/core/<part>/, parts in the order
#           base < model < formats < render < analysis: a part includes core headers of its own
#           part and of the parts before it, never a daemon header; libc only, but for the
#           files named in CORE_THIRD_PARTY (a library of their own each) and private headers of
#           the same folder ("x_internal.h", "x_priv.h").
#   daemon: src/daemon/<stage>/ and include/ember/daemon/<stage>/, stages in the order
#           service < sample < proc < elf < unwind < symbols < ingest < store < export < http <
#           pipeline (the running daemon: the drain loop and the worker's jobs): a stage
#           includes core, its own stage and the stages before it, never a later one. Only
#           src/daemon/main.c wires them all.
#   cli:    src/cli/ includes core headers, never a daemon header, nor libbpf, libdw, libelf or
#           libmicrohttpd.
#   bpf:    bpf/ includes no ember header but include/ember/daemon/sample/bpf_shared.h.
#
# Exit 0 with "layering: ok", or 1 with one line per broken rule. ROOT=dir checks another tree.
set -u
cd "${ROOT:-$(dirname "$0")/..}" || exit 2
rc=0
bad() { echo "layering: $*"; rc=1; }

CORE_PARTS=(base model formats render analysis)
STAGES=(service sample proc elf unwind symbols ingest store export http pipeline)
# core files that may use one third-party library (the pattern of its headers)
declare -A CORE_THIRD_PARTY=(
	[src/core/base/regex.c]='pcre2\.h'
	[src/core/base/gzip.c]='zlib\.h'
	[src/core/formats/pprof.c]='gen/profile\.pb-c\.h'
	[src/core/formats/otlp.c]='gen/otlp\.pb-c\.h'
	[src/core/analysis/hotelling.c]='gsl/'
)
# libc and the kernel's UAPI: what "libc only" allows
LIBC='assert|ctype|errno|fcntl|float|inttypes|limits|locale|math|pthread|regex|signal|stdalign|stdarg|stdatomic|stdbool|stddef|stdint|stdio|stdlib|string|strings|time|unistd|fnmatch|search|endian|byteswap|malloc|poll|dirent|sys/[a-z_]+|linux/types'

# positions of the parts and stages, by name
declare -A PART_IDX=() STAGE_IDX=()
for i in "${!CORE_PARTS[@]}"; do PART_IDX[${CORE_PARTS[$i]}]=$i; done
for i in "${!STAGES[@]}"; do STAGE_IDX[${STAGES[$i]}]=$i; done
LIBC_RE="^<($LIBC)\\.h>$"

# includes FILE: one "LINE<TAB>WHAT" per #include line (one grep over the tree, read once)
declare -A INC=()
while IFS=$'\t' read -r f line what; do
	INC[$f]+="$line"$'\t'"$what"$'\n'
done < <(grep -rn --include='*.[ch]' '^[[:space:]]*#[[:space:]]*include' src include bpf |
	sed -E 's/^([^:]+):([0-9]+):[[:space:]]*#[[:space:]]*include[[:space:]]*/\1\t\2\t/')
includes() { printf '%s' "${INC[$1]:-}"; }

check_core() { # FILE PART
	local f=$1 part=$2 me line what p idx third=${CORE_THIRD_PARTY[$1]:-}
	me=${PART_IDX[$part]:--1}
	[ "$me" -ge 0 ] || { bad "$f: '$part' is not a core part (${CORE_PARTS[*]})"; return; }
	while IFS=$'\t' read -r line what; do
		case $what in
		'"ember/core/'*)
			p=${what#\"ember/core/}
			p=${p%%/*}
			idx=${PART_IDX[$p]:--1}
			[ "$idx" -ge 0 ] && [ "$idx" -le "$me" ] ||
				bad "$f:$line: core/$part includes $what, a later core part"
			;;
		'"ember/'*) bad "$f:$line: core includes $what: core never includes the daemon" ;;
		'"'*_internal.h'"' | '"'*_priv.h'"') ;;
		*)
			if [ -n "$third" ] && [[ $what =~ $third ]]; then
				continue
			fi
			[[ $what =~ $LIBC_RE ]] || bad "$f:$line: core must stay on libc: $what"
			;;
		esac
	done < <(includes "$f")
}

check_daemon() { # FILE STAGE
	local f=$1 st=$2 me line what s idx
	me=${STAGE_IDX[$st]:--1}
	[ "$me" -ge 0 ] || { bad "$f: '$st' is not a daemon stage (${STAGES[*]})"; return; }
	while IFS=$'\t' read -r line what; do
		case $what in
		'"ember/daemon/'*)
			s=${what#\"ember/daemon/}
			s=${s%%/*}
			idx=${STAGE_IDX[$s]:--1}
			[ "$idx" -ge 0 ] && [ "$idx" -le "$me" ] ||
				bad "$f:$line: $st includes $what, a later stage (${STAGES[*]})"
			;;
		'"../'*) bad "$f:$line: $what reaches into another folder" ;;
		esac
	done < <(includes "$f")
}

for f in $(find src/core include/ember/core -name '*.[ch]' | sort); do
	part=${f#src/core/}; part=${part#include/ember/core/}
	[ "${part%/*}" = "$part" ] && { bad "$f: core files live in a part's folder"; continue; }
	part=${part%%/*}
	check_core "$f" "$part"
done
for f in $(find src/daemon include/ember/daemon -name '*.[ch]' ! -path src/daemon/main.c | sort); do
	st=${f#src/daemon/}; st=${st#include/ember/daemon/}
	[ "${st%/*}" = "$st" ] && { bad "$f: daemon files live in a stage's folder"; continue; }
	st=${st%%/*}
	check_daemon "$f" "$st"
done
for f in $(find src/cli -name '*.[ch]' | sort); do
	while IFS=$'\t' read -r line what; do
		case $what in
		'"ember/daemon/'*) bad "$f:$line: the CLI includes $what: never a daemon header" ;;
		'<bpf/'* | '<elfutils/'* | '<libelf.h>' | '<gelf.h>' | '<microhttpd.h>')
			bad "$f:$line: the CLI includes $what: daemon libraries" ;;
		esac
	done < <(includes "$f")
done
for f in $(find bpf -name '*.[ch]' | sort); do
	while IFS=$'\t' read -r line what; do
		case $what in
		'"ember/daemon/sample/bpf_shared.h"') ;;
		'"ember/'*) bad "$f:$line: BPF includes $what: only bpf_shared.h is shared" ;;
		esac
	done < <(includes "$f")
done
[ $rc -eq 0 ] && echo "layering: ok"
exit $rc
