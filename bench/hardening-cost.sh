#!/usr/bin/env bash
# bench/hardening-cost.sh: what the hardened sandbox (issue 16: a user
# namespace with no capability, seccomp, nobody when root, a minimal root,
# per-attempt cgroup and tmpfs limits) costs per attempt, against the
# sandbox before it, side by side in one run.
#
# One repository of 50 files with one property of 40 seeds whose command
# takes 200 ms (`sh props/prop.sh SEED`: sleep 0.2), workers: 1, and a
# candidate that only touches README.md. For each binary a first check
# prepares the worktrees and warms the replay cache; each timed check then
# makes 40 candidate attempts. overhead/attempt = (check wall - bare
# wall) / 40, where bare is the same 40 commands run one after the other
# by bash in a checkout. CPU time (user + sys of the check and its
# children) is printed beside the wall time.
#
# BEFORE_REV (default 0f63afa, the last commit before the hardening) is
# built from this repository's history into a temporary worktree; AFTER
# is the working tree (or FLAKEGATE, a built binary). ROUNDS rounds
# (default 5), alternating which binary goes first. Prints each round and
# the medians. Aim: after at most 20 ms per attempt.
set -euo pipefail

cd "$(dirname "$0")/.."
rounds=${ROUNDS:-5}
before_rev=${BEFORE_REV:-0f63afa}
seeds=40
work=$(mktemp -d /tmp/flakegate-bench-hardening.XXXXXX)
chmod 755 "$work"
trap 'git worktree remove --force "$work/before-src" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

echo "# bench/hardening-cost.sh $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "# uptime: $(uptime)"
echo "# nproc: $(nproc)"
echo "# cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
echo "# kernel: $(uname -r); $(bwrap --version); $(go version); uid $(id -u)"
echo "# before: $before_rev ($(git log -1 --format=%s "$before_rev" | cut -c1-60))"
echo "# after: $(git rev-parse --short HEAD)$(git diff --quiet || echo ' + uncommitted changes')"

git worktree add -q --detach "$work/before-src" "$before_rev"
(cd "$work/before-src" && go build -o "$work/fg-before" ./cmd/flakegate)
if [ -n "${FLAKEGATE:-}" ]; then
	cp "$FLAKEGATE" "$work/fg-after"
else
	go build -o "$work/fg-after" ./cmd/flakegate
fi

export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.com
export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.com
unset FLAKEGATE_LEDGER

# make_repo DIR: the 50-file repository, with tags base and cand.
make_repo() {
	local dir=$1
	mkdir -p "$dir/props" "$dir/fixtures" "$dir/src"
	(
		cd "$dir"
		printf '#!/bin/sh\nsleep 0.2\nexit 0\n' >props/prop.sh
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
			echo '    wall_budget: 30s'
		} >flakegate.yaml
		for i in $(seq 1 47); do head -c 4096 /dev/zero | tr '\0' x >"src/f$i.txt"; done
		git init -q -b main .
		git add -A
		git commit -qm base
		git tag base
		echo cand >README.md
		git add README.md
		git commit -qm cand
		git tag cand
	)
}

# timed CMD...: runs CMD, prints "wall_s cpu_s" (cpu: user+sys of it and its children).
timed() {
	/usr/bin/time -f '%e %U %S' -o "$work/time.out" "$@" >/dev/null 2>&1 || true
	awk '{printf "%.3f %.3f\n", $1, $2 + $3}' "$work/time.out"
}

bare() {
	local dir=$1 n=$2
	(cd "$dir" && for s in $(seq 1 "$n"); do sh props/prop.sh "$s"; done)
}

for side in before after; do
	make_repo "$work/repo-$side"
	# The first check prepares the trees; its result is not timed.
	(cd "$work/repo-$side" && "$work/fg-$side" check --base base --candidate cand --json >/dev/null 2>"$work/first-$side.err") || true
	grep -E '^note: (sandbox|attempt trees)' "$work/first-$side.err" | sed "s/^/# $side: /" || true
done

export -f bare
declare -a ob oa cb ca
for r in $(seq 1 "$rounds"); do
	order="before after"
	if [ $((r % 2)) = 0 ]; then order="after before"; fi
	for side in $order; do
		read -r bw _ < <(timed bash -c "bare $work/repo-$side $seeds")
		read -r cw cc < <(cd "$work/repo-$side" && timed "$work/fg-$side" check --base base --candidate cand --json)
		o=$(awk -v c="$cw" -v b="$bw" -v n=$seeds 'BEGIN{printf "%.1f", (c-b)*1000/n}')
		echo "round $r $side: bare ${bw}s check ${cw}s (cpu ${cc}s) overhead/attempt ${o} ms"
		if [ "$side" = before ]; then ob+=("$o"); cb+=("$cc"); else oa+=("$o"); ca+=("$cc"); fi
	done
done

median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END{if (NR%2) print a[(NR+1)/2]; else printf "%.2f\n", (a[NR/2]+a[NR/2+1])/2}'; }
mb=$(median "${ob[@]}")
ma=$(median "${oa[@]}")
echo "median overhead/attempt: before ${mb} ms, after ${ma} ms (after - before: $(awk -v a="$ma" -v b="$mb" 'BEGIN{printf "%+.1f", a-b}') ms)"
echo "median check cpu: before $(median "${cb[@]}")s, after $(median "${ca[@]}")s"
echo "aim: after at most 20 ms per attempt: $(awk -v a="$ma" 'BEGIN{print (a <= 20) ? "met" : "missed"}')"
