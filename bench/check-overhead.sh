#!/usr/bin/env bash
# bench/check-overhead.sh: the wall time of `flakegate check` against the
# bare sum of the command runs it makes, side by side in one run.
#
# The repository (built under bench/out/, gitignored) has one property with
# 40 seeds whose command sleeps 200 ms (sh props/prop.sh SEED), workers: 1,
# and a candidate that only touches README.md, so every triple is one
# passing candidate run. A first check warms the replay cache (40 base
# runs); each timed check then makes the 40 candidate runs and takes every
# base result from the cache. The peer is the same 40 commands run one
# after the other by bash in a checkout of the candidate.
#
# ROUNDS rounds (default 5), alternating which side goes first. Prints each
# round, the medians and the ratio flakegate / bare. Target: ratio <= 1.10.
# With STRICT=1 a missed target exits 1.
#
# Environment: FLAKEGATE (a built binary; default: go build ./cmd/flakegate),
# ROUNDS, STRICT.
set -euo pipefail

cd "$(dirname "$0")/.."
out=$PWD/bench/out/check-overhead
rounds=${ROUNDS:-5}
mkdir -p "$out"

fg=${FLAKEGATE:-}
if [ -z "$fg" ]; then
	go build -o bench/out/flakegate ./cmd/flakegate
	fg=$PWD/bench/out/flakegate
fi
fg=$(cd "$(dirname "$fg")" && pwd)/$(basename "$fg")

repo=$out/repo
rm -rf "$repo"
mkdir -p "$repo/props" "$repo/fixtures"
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.com
export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.com
unset FLAKEGATE_LEDGER
(
	cd "$repo"
	printf '#!/bin/sh\n# A property that takes 200 ms for every seed.\nsleep 0.2\n' >props/prop.sh
	echo data >fixtures/data.txt
	{
		echo 'version: 1'
		echo 'retry_cap: 2'
		echo 'workers: 1'
		echo 'properties:'
		echo '  - path: props/prop.sh'
		echo '    fixture: fixtures/data.txt'
		echo "    seeds: [$(seq -s ', ' 1 40)]"
		echo '    run: [sh, "{path}", "{seed}"]'
		echo '    wall_budget: 10s'
	} >flakegate.yaml
	echo bench >README.md
	git init -q -b main
	git add -A
	git commit -q -m base
	git tag base
	echo candidate >>README.md
	git commit -q -am candidate
	git tag candidate
)
checkout=$out/checkout
rm -rf "$checkout"
git clone -q "$repo" "$checkout"
git -C "$checkout" checkout -q candidate

check() {
	(cd "$repo" && "$fg" check --base base --candidate candidate >/dev/null 2>"$out/check.stderr")
}
bare() {
	(cd "$checkout" && for seed in $(seq 1 40); do sh props/prop.sh "$seed"; done)
}

echo "warming the replay cache (40 base runs) ..." >&2
check
grep -q "40 PASS" "$out/check.stderr" || { cat "$out/check.stderr" >&2; exit 3; }

TIMEFORMAT='%R'
fgs=() bares=()
for r in $(seq 1 "$rounds"); do
	if [ $((r % 2)) -eq 1 ]; then
		f=$({ time check; } 2>&1)
		b=$({ time bare; } 2>&1)
	else
		b=$({ time bare; } 2>&1)
		f=$({ time check; } 2>&1)
	fi
	fgs+=("$f") bares+=("$b")
	printf 'round %d: flakegate %.3fs  bare %.3fs\n' "$r" "$f" "$b"
done

median() { printf '%s\n' "$@" | sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
mf=$(median "${fgs[@]}")
mb=$(median "${bares[@]}")
ratio=$(awk -v f="$mf" -v b="$mb" 'BEGIN {printf "%.3f", f / b}')
echo "median: flakegate ${mf}s, bare ${mb}s (40 runs of 200 ms, warm replay cache)"
echo "ratio flakegate/bare: $ratio (target <= 1.10)"
if [ "${STRICT:-0}" = 1 ] && awk -v r="$ratio" 'BEGIN {exit !(r > 1.10)}'; then
	exit 1
fi
