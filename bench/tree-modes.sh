#!/usr/bin/env bash
# bench/tree-modes.sh: bench/sandbox-overhead.sh's per-attempt overhead of
# this checkout's flakegate next to a peer's (default: the main branch),
# side by side in one run, in each tree mode:
#
#   root            flakegate as root: a throwaway overlay per attempt
#                   (both binaries)
#   nonroot         flakegate as uid $BENCH_UID: this checkout mounts an
#                   overlay per attempt in the sandbox helper's own user
#                   namespace; a peer from before that resets and cleans
#                   the worktree after each attempt
#   root-copy       as root with FLAKEGATE_NO_OVERLAY=1: a fresh copy of
#                   the tree per attempt (a peer from before: the reset)
#   nonroot-copy    the same as uid $BENCH_UID
#
# Each round runs sandbox-overhead.sh once per binary (ROUNDS=1,
# SKIP_PREP=1), alternating which goes first, and reads its "median
# overhead per attempt" line (small: 50 files, big: 50,000 files) and its
# marginal cost; it prints each round, the medians per mode and binary,
# and the ratio this/peer. Aim: big <= 30 ms per attempt in every mode
# but the copies, whose cost this script measures too (a copy of 50,000
# files is not free on a file system without reflinks, such as ext4).
#
# Environment: SIDES (default "this peer"; "this" measures this checkout
# alone, e.g. the copies, whose peer may take long), PEER (a built peer binary; default: `git archive
# ${PEER_REV:-main}` built in a temporary folder), FLAKEGATE (this
# checkout's binary; default: go build), MODES (default "root nonroot
# root-copy nonroot-copy"), ROUNDS (default 3), BENCH_UID (default 61536:
# a uid of its own, since RLIMIT_NPROC counts every process of a user),
# BENCH_CACHE (default /tmp/flakegate-bench-sandbox; the non-root modes use
# $BENCH_CACHE-$BENCH_UID, owned by that uid). Needs root (the non-root
# modes run through setpriv).
set -euo pipefail

cd "$(dirname "$0")/.."
echo "# bench/tree-modes.sh $(date -u +%Y-%m-%dT%H:%M:%SZ) at $(git rev-parse --short HEAD)"
echo "# uptime: $(uptime)"
echo "# nproc: $(nproc)"
echo "# cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
echo "# $(go version)"
echo "# file system of the caches: $(stat -f -c %T /tmp)"
[ "$(id -u)" = 0 ] || { echo "tree-modes.sh needs root (its non-root modes run through setpriv)" >&2; exit 2; }
rounds=${ROUNDS:-3}
modes=${MODES:-root nonroot root-copy nonroot-copy}
uid=${BENCH_UID:-61536}
cache=${BENCH_CACHE:-/tmp/flakegate-bench-sandbox}

# Binaries and the script in a folder every user can read.
work=$(mktemp -d /tmp/flakegate-tree-modes-XXXXXX)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
this=${FLAKEGATE:-}
if [ -z "$this" ]; then
	go build -o "$work/this" ./cmd/flakegate
else
	cp "$this" "$work/this"
fi
peer=${PEER:-}
if [ -z "$peer" ]; then
	rev=${PEER_REV:-main}
	mkdir "$work/src"
	git archive "$rev" | tar -x -C "$work/src"
	(cd "$work/src" && go build -o "$work/peer" ./cmd/flakegate)
	rm -rf "$work/src"
	echo "# peer: $rev ($(git rev-parse --short "$rev"))"
else
	cp "$peer" "$work/peer"
	echo "# peer: $peer"
fi
cp bench/sandbox-overhead.sh "$work/overhead.sh"
chmod 755 "$work/this" "$work/peer" "$work/overhead.sh"

# one MODE BINARY: one sandbox-overhead.sh round; prints "big small marginal-big".
one() {
	local mode=$1 bin=$2 env=() as=() c=$cache
	case $mode in *copy) env+=(FLAKEGATE_NO_OVERLAY=1) ;; esac
	case $mode in
	nonroot*)
		c=$cache-$uid
		mkdir -p "$c" "$c-home"
		chown "$uid:$uid" "$c" "$c-home"
		as=(setpriv --reuid="$uid" --regid="$uid" --clear-groups)
		env+=(HOME="$c-home")
		;;
	esac
	local out
	out=$(cd "$work" && "${as[@]}" env -u PEER "${env[@]}" FLAKEGATE="$work/$bin" BENCH_CACHE="$c" ROUNDS=1 SKIP_PREP=1 bash "$work/overhead.sh" 2>"$work/err") || {
		cat "$work/err" >&2
		echo "$out" >&2
		exit 3
	}
	echo "$out" | sed "s/^/  [$mode $bin] /" >&2
	local big small mbig
	small=$(echo "$out" | sed -n 's/^median overhead per attempt: small (50 files) \([-0-9.]*\) ms.*/\1/p')
	big=$(echo "$out" | sed -n 's/^median overhead per attempt: .*big (50,\{0,1\}000 files) \([-0-9.]*\) ms.*/\1/p')
	mbig=$(echo "$out" | sed -n 's/^median marginal cost per attempt: .*big \([-0-9.]*\) ms.*/\1/p')
	echo "$big $small $mbig"
}

median() { printf '%s\n' "$@" | sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

declare -A big small marg
for mode in $modes; do
	for r in $(seq 1 "$rounds"); do
		order=${SIDES:-this peer}
		[ $((r % 2)) -eq 0 ] && order=$(echo "$order" | awk '{for (i = NF; i > 0; i--) printf "%s%s", $i, (i > 1 ? " " : "")}')
		line="$mode round $r:"
		for bin in $order; do
			read -r b s m < <(one "$mode" "$bin")
			big[$mode.$bin]="${big[$mode.$bin]:-} $b"
			small[$mode.$bin]="${small[$mode.$bin]:-} $s"
			marg[$mode.$bin]="${marg[$mode.$bin]:-} $m"
			line="$line $bin big ${b} ms small ${s} ms marginal big ${m} ms;"
		done
		echo "$line"
	done
done
for mode in $modes; do
	# shellcheck disable=SC2086
	tb=$(median ${big[$mode.this]:-0}) pb=$(median ${big[$mode.peer]:-0})
	# shellcheck disable=SC2086
	ts=$(median ${small[$mode.this]:-0}) ps=$(median ${small[$mode.peer]:-0})
	# shellcheck disable=SC2086
	tm=$(median ${marg[$mode.this]:-0}) pm=$(median ${marg[$mode.peer]:-0})
	echo "median $mode: this big ${tb} ms/attempt (small ${ts}, marginal big ${tm}); peer big ${pb} ms/attempt (small ${ps}, marginal big ${pm}); this/peer big $(awk -v a="$tb" -v b="$pb" 'BEGIN {if (b > 0) printf "%.2f", a / b; else print "n/a"}')"
done
echo "load: $(uptime)"
