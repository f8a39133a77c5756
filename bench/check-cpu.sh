#!/usr/bin/env bash
# bench/check-cpu.sh: where the CPU of a go suite's check goes, by
# program, beside the bare suite once per seed. A real module:
# github.com/spf13/cobra v1.10.2, its root package (copied from the Go
# module cache, where this repository's own go.sum brings it), gated by
# one suites: entry (seeds [1, 2, 3]), as bench/suite.sh sets it up.
#
# The patch is an agent's: a function in cobra.go and its test beside
# the old ones in cobra_test.go, so the root package's test binary is
# new to the check and to the bare run alike.
#
# Each side runs under `perf record -e task-clock -F 1000` (every process
# the command starts, in the sandbox too; about one sample per
# millisecond of CPU), and the samples are counted by program name. The
# bare side is go test -count=1 -shuffle=S . for S in 1 2 3 on the
# candidate's tree, with the user's warm GOCACHE (its first seed builds
# the new test binary, the next two reuse it). ROUNDS rounds (default 2),
# alternating which side goes first; medians.
#
# Needs: perf, bubblewrap, go, root (perf of the sandbox's processes).
set -euo pipefail

cd "$(dirname "$0")/.."
command -v perf >/dev/null || { echo "bench/check-cpu.sh: needs perf (apt-get install linux-perf)"; exit 2; }
rounds=${ROUNDS:-2}
bench_name=check-cpu
header_extra="; $(perf --version)"
# shellcheck source=bench/cobra.sh
. bench/cobra.sh

# agent N: a function and its test beside the old ones, new in every round.
agent() {
	(cd "$repo" && git checkout -q --detach base &&
		printf '\n// Twice%s doubles n.\nfunc Twice%s(n int) int { return 2 * n }\n' "$1" "$1" >>cobra.go &&
		printf '\nfunc TestTwice%s(t *testing.T) {\n\tif Twice%s(2) != 4 {\n\t\tt.Fatal("no")\n\t}\n}\n' "$1" "$1" >>cobra_test.go &&
		gitc commit -qam "agent $1" && git tag "agent$1")
}

# profiled NAME CMD...: run CMD under perf; wall seconds into $work/NAME.wall,
# "program cpu-seconds" lines into $work/NAME.cpu.
profiled() {
	local name=$1
	shift
	local t0 t1
	t0=$(date +%s.%N)
	perf record -q -e task-clock -F 1000 -o "$work/$name.data" -- "$@" >"$work/$name.out" 2>&1 || {
		echo "$name failed:"
		tail -20 "$work/$name.out"
		exit 3
	}
	t1=$(date +%s.%N)
	echo "$t1 - $t0" | bc >"$work/$name.wall"
	perf script -F comm -i "$work/$name.data" 2>/dev/null | sed 's/^ *//' | sort | uniq -c |
		awk '{n=$1; $1=""; sub(/^ /, ""); printf "%s %.2f\n", $0, n/1000}' | sort -k2 -gr >"$work/$name.cpu"
}
total() { awk '{s+=$NF} END {printf "%.2f", s}' "$1"; }
show() { # name label
	echo "#   $2: $(cat "$work/$1.wall") s wall, $(total "$work/$1.cpu") s CPU; by program (s):$(head -8 "$work/$1.cpu" | awk '{printf " %s %s;", $1, $2}')"
}

check_side() {
	profiled "check$1" sh -c "cd '$repo' && '$fg' check --json --base base --candidate agent$1 >'$work/check$1.json'"
	grep -q '"verdict": "pass"' "$work/check$1.json" || { echo "check of agent$1 did not pass"; exit 3; }
	show "check$1" "check of agent$1 ($(grep -c '"label": "PASS"' "$work/check$1.json") PASS)"
}
bare_side() {
	profiled "bare$1" sh -c "cd '$repo' && git checkout -q agent$1 && for s in 1 2 3; do go test -count=1 -shuffle=\$s -skip '^TestFailGen' . >/dev/null || exit 1; done"
	show "bare$1" "bare suite once per seed on agent$1"
}

echo "# warm-up: a first check (fills the sandbox's Go build cache from the base) and a bare run"
agent 0
check_side 0
bare_side 0
: >"$work/c.cpu"
: >"$work/b.cpu"
: >"$work/c.wall"
: >"$work/b.wall"
for r in $(seq 1 "$rounds"); do
	echo "# round $r"
	agent "$r"
	if [ $((r % 2)) = 1 ]; then check_side "$r"; bare_side "$r"; else bare_side "$r"; check_side "$r"; fi
	total "$work/check$r.cpu" >>"$work/c.cpu"; echo >>"$work/c.cpu"
	total "$work/bare$r.cpu" >>"$work/b.cpu"; echo >>"$work/b.cpu"
	cat "$work/check$r.wall" >>"$work/c.wall"
	cat "$work/bare$r.wall" >>"$work/b.wall"
done
cc=$(median <"$work/c.cpu"); bc_=$(median <"$work/b.cpu")
cw=$(median <"$work/c.wall"); bw=$(median <"$work/b.wall")
echo "check of an agent's patch: median $cw s wall, $cc s CPU; bare suite once per seed: median $bw s wall, $bc_ s CPU; ratio $(echo "scale=2; $cw / $bw" | bc)x wall, $(echo "scale=2; $cc / $bc_" | bc)x CPU"
echo "# the last round's check, CPU by program (s):"
sed 's/^/#     /' "$work/check$rounds.cpu" | head -15
echo "# uptime at the end: $(uptime)"
