#!/usr/bin/env bash
# bench/judge-work.sh: the work a check saves when the diff alone decides
# (CONTAMINATED triples run nothing) and when a failed seed also fails on
# base (PROPERTY after one candidate attempt, no retries), on the
# pytest+hypothesis example (needs pytest with hypothesis on PATH).
#
# The repository (under bench/out/, gitignored) is examples/pytest-hypothesis
# with 3 seeds, random_seeds 0 and retry_cap 2. Two measurements, each
# against a peer in the same run, alternating which side goes first:
#
#   contaminated: a candidate edits tests/conftest.py (watched). flakegate
#     check (nothing runs) vs flakegate check --run-contaminated (the 3
#     candidate attempts and 3 base replays run, as every check did before).
#   base-red: the base breaks the property and the candidate only edits the
#     README. flakegate check --no-replay-cache (1 candidate attempt and 1
#     base replay per seed) vs the same command run 4 times per seed by bash
#     (what 3 candidate attempts and 1 base replay cost).
#
# ROUNDS rounds (default 3). Prints each round, the medians and the ratios.
# Environment: FLAKEGATE (a built binary; default: go build ./cmd/flakegate),
# ROUNDS.
set -euo pipefail

cd "$(dirname "$0")/.."
root=$PWD
out=$root/bench/out/judge-work
rounds=${ROUNDS:-3}
mkdir -p "$out"
command -v pytest >/dev/null || { echo "pytest is not installed" >&2; exit 2; }

fg=${FLAKEGATE:-}
if [ -z "$fg" ]; then
	go build -o bench/out/flakegate ./cmd/flakegate
	fg=$root/bench/out/flakegate
fi
fg=$(cd "$(dirname "$fg")" && pwd)/$(basename "$fg")

export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.com
export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.com
unset FLAKEGATE_LEDGER

# make_repo DIR BASE_BREAKS: the example as the base (broken when 1).
make_repo() {
	rm -rf "$1"
	mkdir -p "$1"
	cp -r examples/pytest-hypothesis/. "$1/"
	(
		cd "$1"
		rm -rf .hypothesis tests/__pycache__ __pycache__
		sed -i 's/^random_seeds: 1 .*/random_seeds: 0/' flakegate.yaml
		if [ "$2" = 1 ]; then sed -i 's/d = min(d, cap_ms)/pass/' retry_budget.py; fi
		git init -q -b main
		git add -A
		git commit -q -m base
		git tag base
	)
}

now() { date +%s.%N; }
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

# contaminated
c=$out/contaminated
make_repo "$c" 0
(cd "$c" && printf "# a candidate edit\n" >>tests/conftest.py && git add -A && git commit -q -m candidate && git tag cand)
# base-red
b=$out/base-red
make_repo "$b" 1
(cd "$b" && echo more >>README.md && git commit -q -am candidate && git tag cand)
argv=$(cd "$b" && awk -F'run: ' '/run:/ {print $2}' flakegate.yaml)

: >"$out/times"
for i in $(seq 1 "$rounds"); do
	for side in $( ((i % 2)) && echo "new peer" || echo "peer new"); do
		if [ "$side" = new ]; then
			t0=$(now); (cd "$c" && "$fg" check --base base --candidate cand --no-replay-cache >/dev/null 2>&1 || true); t1=$(now)
			echo "contaminated new $(echo "$t1 - $t0" | bc)" >>"$out/times"
			t0=$(now); (cd "$b" && "$fg" check --base base --candidate cand --no-replay-cache >/dev/null 2>&1 || true); t1=$(now)
			echo "base-red new $(echo "$t1 - $t0" | bc)" >>"$out/times"
		else
			t0=$(now); (cd "$c" && "$fg" check --base base --candidate cand --no-replay-cache --run-contaminated >/dev/null 2>&1 || true); t1=$(now)
			echo "contaminated peer $(echo "$t1 - $t0" | bc)" >>"$out/times"
			# The peer of base-red: each seed's command 4 times in a checkout.
			rm -rf "$out/checkout"
			git -C "$b" worktree prune
			git -C "$b" worktree add -q --detach "$out/checkout" cand
			t0=$(now)
			for seed in 1400 1401 1402; do
				for _ in 1 2 3 4; do
					(cd "$out/checkout" && pytest -q -p no:cacheprovider tests/test_retry_budget.py::test_delays_within_cap_and_monotonic \
						"--hypothesis-seed=$seed" --samples=200 -rA >/dev/null 2>&1 || true)
				done
			done
			t1=$(now)
			echo "base-red peer $(echo "$t1 - $t0" | bc)" >>"$out/times"
			git -C "$b" worktree remove --force "$out/checkout"
		fi
	done
	grep -E "^(contaminated|base-red)" "$out/times" | tail -4 | sed "s/^/round $i: /"
done

for m in contaminated base-red; do
	new=$(awk -v m=$m '$1==m && $2=="new" {print $3}' "$out/times" | median)
	peer=$(awk -v m=$m '$1==m && $2=="peer" {print $3}' "$out/times" | median)
	printf '%s: flakegate %.2fs, peer %.2fs, ratio %.3f (median of %d rounds)\n' "$m" "$new" "$peer" "$(echo "$new / $peer" | bc -l)" "$rounds"
done
: "argv of the base config: $argv"
