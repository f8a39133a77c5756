#!/usr/bin/env bash
# bench/sandbox-overhead.sh: the per-attempt overhead of `flakegate check`
# (a bwrap sandbox per attempt, on a throwaway overlay of its tree or on a
# tree reset and cleaned before it) on a repository of 50 files and one of
# 50,000 files (~200 MB), side by side in one run.
#
# Each repository has one property with 20 seeds whose command is
# `sh props/prop.sh SEED` (it exits 0 at once), workers: 1, and a candidate
# that only touches README.md. A first check prepares the worktrees and
# warms the replay cache; each timed check then makes 20 candidate
# attempts. overhead/attempt = (check wall - bare wall) / 20, where bare is
# the same 20 commands run one after the other by bash in a checkout.
# That figure carries the check's fixed cost (opening and proving the
# trees, once per check), so the script also prints the marginal cost of
# an attempt: (wall of a check of 40 seeds - wall of the check of 20) /
# 20, the 40-seed config committed as tags base40/cand40. The timed checks
# alternate between the two candidates, so every check moves its
# candidate tree to another commit, as a check of a new patch does. A
# third figure times a check with the replay cache emptied first: 20
# candidate and 20 base attempts, (check wall - 2 x bare wall) / 40. It
# says which attempt trees the check used (a throwaway overlay per
# attempt, or a reset and clean after each) and how it opened them.
#
# It also times, on the big repository, the first check's worktree
# preparation (a check with no worktrees minus a check with them) against
# a plain `git worktree add` of as many trees as the check makes (2 on
# overlays, 3 with FLAKEGATE_NO_OVERLAY=1), in alternating order.
#
# The repositories are generated once and cached under $BENCH_CACHE
# (default /tmp/flakegate-bench-sandbox). ROUNDS rounds (default 3),
# alternating which side goes first. Prints each round and the medians.
# Aims: at most 30 ms/attempt at 50,000 files; big at most 1.5x small.
#
# With PEER (another built binary, e.g. main's) every round times the
# peer too, in alternating order with this binary on the same
# repositories, and the medians are printed for both with their ratio.
#
# Environment: FLAKEGATE (a built binary; default: go build ./cmd/flakegate),
# PEER,
# ROUNDS, BENCH_CACHE, SKIP_PREP=1 (skip the preparation timing, minutes on
# the big repository), PREP_ONLY=1 (only the preparation timing; with
# BENCH_CACHE on a tmpfs such as /dev/shm it leaves out the disk, whose
# noise on a shared machine can be larger than either side),
# FLAKEGATE_NO_OVERLAY=1 (force the reset path), BIG_FILES (the big
# repository's file count, default 50000; a smaller one for a quick run).
set -euo pipefail

cd "$(dirname "$0")/.."
echo "# bench/sandbox-overhead.sh $(date -u +%Y-%m-%dT%H:%M:%SZ) at $(git rev-parse --short HEAD)"
echo "# uptime: $(uptime)"
echo "# nproc: $(nproc)"
echo "# cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
rounds=${ROUNDS:-3}
cache=${BENCH_CACHE:-/tmp/flakegate-bench-sandbox}
mkdir -p "$cache"
seeds=20

fg=${FLAKEGATE:-}
if [ -z "$fg" ]; then
	mkdir -p bench/out
	go build -o bench/out/flakegate ./cmd/flakegate
	fg=$PWD/bench/out/flakegate
fi
fg=$(cd "$(dirname "$fg")" && pwd)/$(basename "$fg")
self=$fg
peer=${PEER:-}
if [ -n "$peer" ]; then
	peer=$(cd "$(dirname "$peer")" && pwd)/$(basename "$peer")
	echo "# peer: $peer"
fi

export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.com
export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.com
unset FLAKEGATE_LEDGER

# make_repo DIR NFILES: a repository of NFILES 4 KB files (cached).
make_repo() {
	local dir=$1 n=$2
	if [ -f "$dir/.ready" ]; then
		return
	fi
	rm -rf "$dir"
	mkdir -p "$dir/props" "$dir/fixtures" "$dir/src"
	(
		cd "$dir"
		printf '#!/bin/sh\nexit 0\n' >props/prop.sh
		echo data >fixtures/data.txt
		{
			echo 'version: 1'
			echo 'retry_cap: 0'
			echo 'workers: 1'
			echo 'properties:'
			echo '  - path: props/prop.sh'
			echo '    fixture: fixtures/data.txt'
			echo "    seeds: [$(seq -s ', ' 1 $seeds)]"
			echo '    run: [sh, "{path}", "{seed}"]'
			echo '    wall_budget: 10s'
		} >flakegate.yaml
		echo bench >README.md
		python3 - "$n" <<-'EOF'
			import os, sys
			n = int(sys.argv[1])
			block = (b"x" * 4095) + b"\n"
			for i in range(n):
			    d = "src/%03d" % (i // 500)
			    os.makedirs(d, exist_ok=True)
			    with open("%s/f%05d.txt" % (d, i), "wb") as f:
			        f.write(block)
		EOF
		git init -q -b main
		git add -A
		git commit -q -m base
		git tag base
		echo candidate >>README.md
		git commit -q -am candidate
		git tag candidate
		git clone -q . ../"$(basename "$dir")-checkout"
		git -C ../"$(basename "$dir")-checkout" checkout -q candidate
	)
	touch "$dir/.ready"
}

# add40 DIR: tags base40 and cand40, the same repository with 40 seeds.
add40() {
	if git -C "$1" rev-parse -q --verify base40 >/dev/null; then
		return
	fi
	(
		cd "$1"
		git checkout -q --detach base
		sed -i "s/seeds: \[.*\]/seeds: [$(seq -s ', ' 1 $((2 * seeds)))]/" flakegate.yaml
		git commit -q -am base40
		git tag base40
		echo candidate >>README.md
		git commit -q -am cand40
		git tag cand40
	)
}

echo "preparing the repositories under $cache (cached) ..." >&2
make_repo "$cache/small" 50
make_repo "$cache/big" "${BIG_FILES:-50000}"
add40 "$cache/small"
add40 "$cache/big"

check() { # check DIR [BASE CANDIDATE]
	(cd "$1" && "$fg" check --base "${2:-base}" --candidate "${3:-candidate}" >/dev/null 2>"$cache/check.stderr")
}
bare() { # bare DIR
	(cd "$1-checkout" && for seed in $(seq 1 $seeds); do sh props/prop.sh "$seed"; done)
}
drop_trees() { # drop_trees DIR: remove flakegate's worktrees
	rm -rf "$1/.git/flakegate/worktrees"
	git -C "$1" worktree prune
}

TIMEFORMAT='%R'
for side in small big; do
	drop_trees "$cache/$side"
	check "$cache/$side" || true
	grep -q "$seeds PASS" "$cache/check.stderr" || { cat "$cache/check.stderr" >&2; exit 3; }
done

declare -A per marg unc
prep=() add=() ntrees=()
for side in small big; do
	check "$cache/$side" base40 cand40 || true
done
for r in $(seq 1 "$rounds"); do
	order="small big"
	[ $((r % 2)) -eq 0 ] && order="big small"
	line="round $r:"
	[ "${PREP_ONLY:-}" = 1 ] && order=""
	whos="self"
	if [ -n "$peer" ]; then
		whos="self peer"
		[ $((r % 2)) -eq 0 ] && whos="peer self"
	fi
	for who in $whos; do
	fg=$self
	[ "$who" = peer ] && fg=$peer
	line="$line [$who]"
	for side in $order; do
		f=$({ time check "$cache/$side"; } 2>&1)
		b=$({ time bare "$cache/$side"; } 2>&1)
		o=$(awk -v f="$f" -v b="$b" -v n=$seeds 'BEGIN {printf "%.1f", (f - b) * 1000 / n}')
		f40=$({ time check "$cache/$side" base40 cand40; } 2>&1)
		m=$(awk -v f="$f" -v g="$f40" -v n=$seeds 'BEGIN {printf "%.1f", (g - f) * 1000 / n}')
		rm -rf "$cache/$side/.git/flakegate/replay"
		fu=$({ time check "$cache/$side"; } 2>&1)
		grep -q "$seeds PASS" "$cache/check.stderr" || { cat "$cache/check.stderr" >&2; exit 3; }
		u=$(awk -v f="$fu" -v b="$b" -v n=$seeds 'BEGIN {printf "%.1f", (f - 2 * b) * 1000 / (2 * n)}')
		check "$cache/$side" base40 cand40 # warm the 40-seed base results again
		key=$side
		[ "$who" = peer ] && key=peer-$side
		per[$key]="${per[$key]:-} $o"
		marg[$key]="${marg[$key]:-} $m"
		unc[$key]="${unc[$key]:-} $u"
		line="$line $side check ${f}s bare ${b}s -> ${o} ms/attempt, 40 seeds ${f40}s -> marginal ${m} ms/attempt, uncached base ${fu}s -> ${u} ms/attempt;"
	done
	done
	fg=$self
	if [ "${SKIP_PREP:-}" = 1 ]; then
		echo "$line"
		continue
	fi
	# First-check preparation on the big repository, against git worktree
	# add of as many trees, in alternating order; `sync` first, so that
	# neither side pays for the other's deleted trees being written back.
	tmp=$cache/plain-add
	n=2
	[ "${FLAKEGATE_NO_OVERLAY:-}" = 1 ] && n=3
	plain() {
		drop_trees "$cache/big"
		rm -rf "$tmp"
		sync
		g=$({ time (for t in $(seq 1 "$n"); do git -C "$cache/big" worktree add -q --detach "$tmp/t$t" base; done); } 2>&1)
		rm -rf "$tmp"
		git -C "$cache/big" worktree prune
	}
	flake() {
		drop_trees "$cache/big"
		sync
		cold=$({ time check "$cache/big"; } 2>&1)
		made=$(find "$cache/big/.git/flakegate/worktrees" -mindepth 1 -maxdepth 1 -type d | wc -l)
		[ "$made" = "$n" ] || { echo "the check made $made trees, not $n" >&2; exit 3; }
		sync
		warm=$({ time check "$cache/big"; } 2>&1)
	}
	if [ $((r % 2)) -eq 1 ]; then
		flake
		plain
	else
		plain
		flake
	fi
	check "$cache/big" # leave the trees prepared for the next round
	p=$(awk -v c="$cold" -v w="$warm" 'BEGIN {printf "%.3f", c - w}')
	prep+=("$p") add+=("$g") ntrees+=("$n")
	echo "$line big first-check preparation of $n trees ${p}s vs git worktree add x$n ${g}s"
done

median() { printf '%s\n' "$@" | sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
if [ "${PREP_ONLY:-}" != 1 ]; then
	# shellcheck disable=SC2086
	ms=$(median ${per[small]})
	# shellcheck disable=SC2086
	mb=$(median ${per[big]})
	# shellcheck disable=SC2086
	gs=$(median ${marg[small]})
	# shellcheck disable=SC2086
	gb=$(median ${marg[big]})
	echo "median overhead per attempt: small (50 files) ${ms} ms, big (${BIG_FILES:-50000} files) ${mb} ms; big/small $(awk -v a="$mb" -v b="$ms" 'BEGIN {printf "%.2f", a / b}') (aims: big <= 30 ms, ratio <= 1.5)"
	echo "median marginal cost per attempt: small ${gs} ms, big ${gb} ms; big/small $(awk -v a="$gb" -v b="$gs" 'BEGIN {printf "%.2f", a / b}') (same aims)"
	# shellcheck disable=SC2086
	us=$(median ${unc[small]})
	# shellcheck disable=SC2086
	ub=$(median ${unc[big]})
	echo "median overhead per attempt with the base replayed (40 attempts): small ${us} ms, big ${ub} ms; big/small $(awk -v a="$ub" -v b="$us" 'BEGIN {printf "%.2f", a / b}') (same aims)"
	if [ -n "$peer" ]; then
		for k in small big; do
			# shellcheck disable=SC2086
			a=$(median ${per[$k]}) b=$(median ${per[peer-$k]})
			# shellcheck disable=SC2086
			c=$(median ${marg[$k]}) d=$(median ${marg[peer-$k]})
			# shellcheck disable=SC2086
			e=$(median ${unc[$k]}) g=$(median ${unc[peer-$k]})
			echo "peer, $k: overhead ${b} ms (this binary ${a} ms, $(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.2f", a / b}')x), marginal ${d} ms (this ${c} ms), with the base replayed ${g} ms (this ${e} ms)"
		done
	fi
	echo "attempt trees: $(grep -h 'attempt trees' "$cache/check.stderr" | sed 's/^attempt trees: //')"
fi
if [ "${#prep[@]}" -gt 0 ]; then
	echo "median first-check preparation (big, ${ntrees[0]} trees): $(median "${prep[@]}")s vs plain git worktree add of as many trees $(median "${add[@]}")s"
fi
echo "load: $(uptime)"
