#!/usr/bin/env bash
# bench/copy-cost.sh: what the fresh-copy tree mode costs per attempt
# (FLAKEGATE_NO_OVERLAY=1, or no overlay possible) on the 50,000-file
# repository of bench/sandbox-overhead.sh, next to what reset mode cost
# per attempt before it was retired, side by side in one run:
#
#   copy    cp -a --reflink=auto of a worktree (what flakegate runs before
#           each attempt), then removing the copy (after it)
#   reset   git reset --hard and git clean -ffdx of the same worktree,
#           through its git folder (what reset mode ran after each
#           attempt), on a tree an attempt touched one file of
#
# ROUNDS rounds (default 5), alternating which goes first; prints each
# round, the medians and copy/reset. A copy is a full copy on a file
# system without reflinks (ext4), so its cost grows with the tree; a
# reflink (Btrfs, XFS) shares the blocks. Needs the cached repository of
# sandbox-overhead.sh (BENCH_CACHE, default /tmp/flakegate-bench-sandbox):
# run that first.
set -euo pipefail

cd "$(dirname "$0")/.."
echo "# bench/copy-cost.sh $(date -u +%Y-%m-%dT%H:%M:%SZ) at $(git rev-parse --short HEAD)"
echo "# uptime: $(uptime)"
echo "# nproc: $(nproc)"
echo "# cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
rounds=${ROUNDS:-5}
cache=${BENCH_CACHE:-/tmp/flakegate-bench-sandbox}
repo=$cache/big
[ -f "$repo/.ready" ] || { echo "no cached repository at $repo: run bench/sandbox-overhead.sh first" >&2; exit 2; }
echo "# file system: $(stat -f -c %T "$repo") ($(git -C "$repo" ls-files | wc -l) files)"
work=$cache/copy-cost
rm -rf "$work"
mkdir -p "$work"
git -C "$repo" worktree add -q --detach "$work/tree" base
trap 'rm -rf "$work"; git -C "$repo" worktree prune' EXIT
gitdir=$(git -C "$work/tree" rev-parse --absolute-git-dir)

TIMEFORMAT='%R'
copy() {
	sync
	c=$({ time cp -a --reflink=auto --no-target-directory "$work/tree" "$work/copy"; } 2>&1)
	d=$({ time rm -rf "$work/copy"; } 2>&1)
}
reset() {
	echo touched >>"$work/tree/README.md"
	touch "$work/tree/new-file"
	sync
	g=$({ time (git --git-dir="$gitdir" --work-tree="$work/tree" -C "$work/tree" reset -q --hard base &&
		git --git-dir="$gitdir" --work-tree="$work/tree" -C "$work/tree" clean -ffdxq); } 2>&1)
}
cs=() ds=() gs=()
for r in $(seq 1 "$rounds"); do
	if [ $((r % 2)) -eq 1 ]; then
		copy
		reset
	else
		reset
		copy
	fi
	cs+=("$c") ds+=("$d") gs+=("$g")
	echo "round $r: copy ${c}s + remove ${d}s; reset and clean ${g}s"
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
mc=$(median "${cs[@]}") md=$(median "${ds[@]}") mg=$(median "${gs[@]}")
echo "median per attempt at 50,000 files: copy ${mc}s + remove ${md}s = $(awk -v a="$mc" -v b="$md" 'BEGIN {printf "%.3f", a + b}')s; reset and clean ${mg}s; copy/reset $(awk -v a="$mc" -v b="$md" -v g="$mg" 'BEGIN {printf "%.2f", (a + b) / g}')"
echo "load: $(uptime)"
