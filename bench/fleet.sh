#!/usr/bin/env bash
# bench/fleet.sh: the wall time of one check of 40 triples whose command
# sleeps 1 s, on 1 runner against 4 runners joining it, side by side in one
# run, on a PostgreSQL ledger; then the queue's own cost per triple.
#
# The repository (built under bench/out/, gitignored) has one property with
# 40 seeds (sh props/prop.sh SEED: sleep 1), workers: 1, and a candidate that
# only touches README.md, so every triple is one passing candidate run and
# one base replay: 80 runs of 1 s. Each round commits a new base (an empty
# commit), so the replay cache is cold on both sides. The 1-runner side is
# 'flakegate check --ledger DSN'; the 4-runner side is four processes, each in
# its own clone, running 'flakegate check --ledger DSN --join --check-id ID'
# with a new ID per round, timed from the first start to the last exit.
#
# ROUNDS rounds (default 3), alternating which side goes first. Prints each
# round, the medians and the speedup 1 runner / 4 runners (target >= 3.2),
# then 'go test -bench BenchmarkQueueClaimComplete ./postgres': one claim
# and one label with its record, the queue's own round trips per triple
# (target < 20 ms). With STRICT=1 a missed target exits 1.
#
# PostgreSQL: $FLAKEGATE_BENCH_DSN if set (its role needs CREATE on the
# database), else a throwaway cluster started here (Debian's postgresql;
# as root it runs as the postgres user) and removed afterwards.
#
# Environment: FLAKEGATE (a built binary; default: go build ./cmd/flakegate),
# ROUNDS, STRICT, FLAKEGATE_BENCH_DSN.
set -euo pipefail

cd "$(dirname "$0")/.."
root=$PWD
out=$root/bench/out/fleet
rounds=${ROUNDS:-3}
rm -rf "$out"
mkdir -p "$out"

fg=${FLAKEGATE:-}
if [ -z "$fg" ]; then
	go build -o bench/out/flakegate ./cmd/flakegate
	fg=$root/bench/out/flakegate
fi
fg=$(cd "$(dirname "$fg")" && pwd)/$(basename "$fg")

dsn=${FLAKEGATE_BENCH_DSN:-}
pgdir=
cleanup() {
	if [ -n "$pgdir" ]; then
		"$pgbin/pg_ctl" -D "$pgdir/data" -m immediate stop >/dev/null 2>&1 || true
		rm -rf "$pgdir"
	fi
}
trap cleanup EXIT
if [ -z "$dsn" ]; then
	pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
	[ -x "$pgbin/initdb" ] || { echo "no PostgreSQL server found; set FLAKEGATE_BENCH_DSN" >&2; exit 3; }
	pgdir=$(mktemp -d /tmp/flakegate-bench-pg-XXXXXX)
	as=()
	if [ "$(id -u)" = 0 ]; then
		chown postgres: "$pgdir"
		as=(runuser -u postgres --)
	fi
	"${as[@]}" "$pgbin/initdb" -D "$pgdir/data" -U postgres -A trust --no-sync -E UTF8 --no-locale >/dev/null
	"${as[@]}" "$pgbin/pg_ctl" -D "$pgdir/data" -l "$pgdir/log" -w -o "-k $pgdir -c listen_addresses= -c fsync=off -c max_connections=200" start >/dev/null
	dsn="postgres://postgres@/postgres?host=$pgdir&sslmode=disable"
fi
export FLAKEGATE_LEDGER=$dsn

repo=$out/repo
mkdir -p "$repo/props" "$repo/fixtures"
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.com
export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.com
(
	cd "$repo"
	printf '#!/bin/sh\n# A property that takes 1 s for every seed.\nsleep 1\n' >props/prop.sh
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
		echo '    wall_budget: 30s'
	} >flakegate.yaml
	echo bench >README.md
	git init -q -b main
	git add -A
	git commit -q -m base
)
# newRound commits a new base and a candidate on it (tags base, candidate)
# and fetches them into the runners' clones.
newRound() {
	(
		cd "$repo"
		git checkout -q --detach main
		git commit -q --allow-empty -m "base $1"
		git branch -qf main
		git tag -f base >/dev/null
		echo "candidate $1" >>README.md
		git commit -q -am "candidate $1"
		git tag -f candidate >/dev/null
	)
	for c in single r1 r2 r3 r4; do
		if [ ! -d "$out/$c" ]; then
			git -c advice.detachedHead=false clone -q "$repo" "$out/$c"
		fi
		git -C "$out/$c" fetch -q -f --tags origin
		git -C "$out/$c" checkout -q --detach candidate
	done
}

one() {
	(cd "$out/single" && "$fg" check --base base --candidate candidate >/dev/null 2>"$out/single.stderr") || {
		cat "$out/single.stderr" >&2
		exit 3
	}
}
four() {
	local id=bench-$1-$RANDOM$RANDOM pids=() i
	for i in 1 2 3 4; do
		(cd "$out/r$i" && exec "$fg" check --base base --candidate candidate --join --check-id "$id" --runner-id "r$i" >/dev/null 2>"$out/r$i.stderr") &
		pids+=($!)
	done
	for i in "${pids[@]}"; do
		wait "$i" || {
			cat "$out"/r*.stderr >&2
			exit 3
		}
	done
}

TIMEFORMAT='%R'
ones=() fours=()
for r in $(seq 1 "$rounds"); do
	newRound "$r-a"
	if [ $((r % 2)) -eq 1 ]; then
		a=$({ time one; } 2>&1)
		newRound "$r-b"
		b=$({ time four "$r"; } 2>&1)
	else
		b=$({ time four "$r"; } 2>&1)
		newRound "$r-b"
		a=$({ time one; } 2>&1)
	fi
	ones+=("$a") fours+=("$b")
	printf 'round %d: 1 runner %.2fs  4 runners %.2fs  (load %s)\n' "$r" "$a" "$b" "$(cut -d' ' -f1-3 /proc/loadavg)"
done
grep -q "40 PASS" "$out/single.stderr" || { cat "$out/single.stderr" >&2; exit 3; }

median() { printf '%s\n' "$@" | sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
m1=$(median "${ones[@]}")
m4=$(median "${fours[@]}")
speedup=$(awk -v a="$m1" -v b="$m4" 'BEGIN {printf "%.2f", a / b}')
echo "median: 1 runner ${m1}s, 4 runners ${m4}s (40 triples: 80 runs of 1 s, cold replay cache)"
echo "speedup 1 runner / 4 runners: ${speedup}x (target >= 3.2)"

echo "queue cost per triple (claim + label with its record, local socket):"
bench=$(cd "$root" && FLAKEGATE_TEST_DSN=$dsn go test -run '^$' -bench BenchmarkQueueClaimComplete -benchtime 2000x -count 5 ./postgres | awk '/^BenchmarkQueueClaimComplete/ {print $3}')
ms=$(median $bench | awk '{printf "%.2f", $1 / 1e6}')
echo "median of 5: ${ms} ms per triple (target < 20 ms)"

if [ "${STRICT:-0}" = 1 ]; then
	awk -v s="$speedup" -v m="$ms" 'BEGIN {exit !(s < 3.2 || m >= 20)}' && exit 1
fi
exit 0
