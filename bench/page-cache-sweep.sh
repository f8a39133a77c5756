#!/usr/bin/env bash
# bench/page-cache-sweep.sh: what the page-cache sweep costs per attempt
# on a check without a memory cgroup (runner/pagecache_linux.go: before
# every attempt each file of the tree is opened, its dirty pages written
# and posix_fadvise(DONTNEED) given), on the 50,000-file repository of
# bench/sandbox-overhead.sh, side by side with its peer, a walk of the
# same tree that only lists it (filepath.WalkDir), in one go test run:
# ROUNDS rounds (default 5) of each, alternating, -benchtime 5x. Prints
# each round, the medians and sweep/walk. Needs the cached repository
# of sandbox-overhead.sh (BENCH_CACHE, default /tmp/flakegate-bench-sandbox).
set -euo pipefail

cd "$(dirname "$0")/.."
echo "# bench/page-cache-sweep.sh $(date -u +%Y-%m-%dT%H:%M:%SZ) at $(git rev-parse --short HEAD 2>/dev/null)"
echo "# uptime: $(uptime)"
echo "# nproc: $(nproc)"
echo "# cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
rounds=${ROUNDS:-5}
cache=${BENCH_CACHE:-/tmp/flakegate-bench-sandbox}
tree=$cache/big
[ -f "$tree/.ready" ] || { echo "no cached repository at $tree: run bench/sandbox-overhead.sh first" >&2; exit 2; }
echo "# tree: $tree ($(find "$tree" -path "$tree/.git" -prune -o -type f -print | wc -l) files, $(stat -f -c %T "$tree"))"
go test -c -o bench/out/runner.test ./runner
sweep=() walk=()
for r in $(seq 1 "$rounds"); do
	order="EvictTrees WalkTree"
	[ $((r % 2)) -eq 0 ] && order="WalkTree EvictTrees"
	line="round $r:"
	for b in $order; do
		ns=$(bench/out/runner.test -test.run '^$' -test.bench "^Benchmark$b\$" -test.benchtime 5x -sweep.tree "$tree" | awk '/ns\/op/ {print $3}')
		ms=$(awk -v n="$ns" 'BEGIN {printf "%.1f", n / 1e6}')
		line="$line $b ${ms} ms"
		if [ "$b" = EvictTrees ]; then sweep+=("$ms"); else walk+=("$ms"); fi
	done
	echo "$line"
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
s=$(median "${sweep[@]}") w=$(median "${walk[@]}")
echo "median: sweep ${s} ms per attempt, walk ${w} ms; sweep/walk $(awk -v a="$s" -v b="$w" 'BEGIN {printf "%.2f", a / b}')"
echo "load: $(uptime)"
