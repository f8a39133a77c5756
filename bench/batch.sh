#!/usr/bin/env bash
# bench/batch.sh: issue 26, "a check costs what the suite costs": batches
# (one process for many triples) side by side with the bare suite in one
# run.
#
# go:     a module of 4 packages of 10 rapid properties each, the config
#         flakegate init writes for it (go test -count=1 -run ^{name}$
#         ./pN -rapid.seed={seed}), 5 seeds each: 200 triples. Timed: the
#         second check (a harmless candidate, base results cached) against
#         the suite run bare once per seed (go test -count=1 -v ./...
#         -rapid.seed=S), and the first check (empty flakegate state)
#         against bare plus one cold build (GOCACHE emptied for it).
# pytest: 4 files of 10 Hypothesis properties, 5 seeds: 200 triples; the
#         second check against pytest tests --hypothesis-seed=S once per
#         seed (and the first check beside it).
# growth: the go module with 20 packages (200 properties, 5 seeds: 1,000
#         triples); its second check over its bare suite, beside the
#         200-triple figure, and flakegate's own peak RSS (VmHWM of the
#         flakegate process, sampled).
#
# SEEDS: "listed" (default: 5 listed seeds per property) or "drawn" (3
# listed and random_seeds: 2). Drawn seeds split batches unless every
# property of a batch draws the same seeds (check/seeds.go, DrawSeeds).
# PARTS: which of "go pytest growth" run (default all three).
# ROUNDS rounds (default 3), medians; wall and CPU seconds (of every
# process, sandboxed attempts included: a cpuacct cgroup). Aims: go second check <= 1.5x bare,
# pytest <= 2x, growth within 10% of the 200-triple ratio.
set -euo pipefail

cd "$(dirname "$0")/.."
rounds=${ROUNDS:-3}
seedmode=${SEEDS:-listed}
parts=" ${PARTS:-go pytest growth} "
work=$(mktemp -d /tmp/flakegate-bench-batch.XXXXXX)
chmod 755 "$work"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin" # its own folder: flakegate hides the folder of its binary from the attempts
fg=${FLAKEGATE:-$work/bin/flakegate}
[ -n "${FLAKEGATE:-}" ] || go build -o "$fg" ./cmd/flakegate
py=/usr/bin/python3

echo "# bench/batch.sh $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "# uptime: $(uptime)"
echo "# nproc: $(nproc)"
echo "# cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
echo "# kernel: $(uname -r); $(bwrap --version); $(go version); $($py -m pytest --version 2>&1); uid $(id -u)"
echo "# flakegate: $(git rev-parse --short HEAD)$(git diff --quiet || echo ' + uncommitted changes'); rounds $rounds; seeds $seedmode; parts$parts"

gitc() { git -c user.name=b -c user.email=b@example.com "$@"; }
median() { sort -g | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
ratio() { if [ "$(echo "$2 == 0" | bc)" = 1 ]; then echo n/a; else echo "scale=2; $1 / $2" | bc; fi; }

bench_name=batch
# shellcheck source=bench/timed.sh
. bench/timed.sh

seedlist() {
	if [ "$seedmode" = drawn ]; then echo "[1, 2, 3]"; else echo "[1, 2, 3, 4, 5]"; fi
}
drawn() { if [ "$seedmode" = drawn ]; then echo 2; else echo 0; fi; }

# gomodule DIR NPKG: the rapid module, NPKG packages of 10 properties.
gomodule() {
	local dir=$1 n=$2
	mkdir -p "$dir"
	cp examples/go-rapid/go.sum "$dir/"
	printf 'module example.com/props\n\ngo 1.23\n\nrequire pgregory.net/rapid v1.3.0\n' >"$dir/go.mod"
	echo "props" >"$dir/README.md"
	{
		echo "version: 1"
		echo "retry_cap: 2"
		echo "workers: 1"
		echo "random_seeds: $(drawn)"
		echo "properties:"
	} >"$dir/flakegate.yaml"
	for p in $(seq -w 1 "$n"); do
		mkdir -p "$dir/p$p"
		printf 'package p%s\n\n// Sum adds xs.\nfunc Sum(xs []int) int {\n\ts := 0\n\tfor _, x := range xs {\n\t\ts += x\n\t}\n\treturn s\n}\n' "$p" >"$dir/p$p/p.go"
		{
			printf 'package p%s\n\nimport (\n\t"testing"\n\n\t"pgregory.net/rapid"\n)\n' "$p"
			for i in $(seq -w 1 10); do
				printf '\nfunc TestProp%s(t *testing.T) {\n\trapid.Check(t, func(t *rapid.T) {\n\t\txs := rapid.SliceOf(rapid.IntRange(-1000, 1000)).Draw(t, "xs")\n\t\tk := rapid.IntRange(0, %d).Draw(t, "k")\n\t\tif got, want := Sum(append(xs, k)), Sum(xs)+k; got != want {\n\t\t\tt.Fatalf("Sum: %%d, want %%d", got, want)\n\t\t}\n\t})\n}\n' "$i" "$((10#$i * 7))"
			done
		} >"$dir/p$p/p_test.go"
		for i in $(seq -w 1 10); do
			cat >>"$dir/flakegate.yaml" <<EOF
  - path: p$p/p_test.go
    name: TestProp$i
    seeds: $(seedlist)
    run: [go, test, -count=1, -run, "^{name}\$", ./p$p, "-rapid.seed={seed}", -rapid.nofailfile]
    wall_budget: 2m
EOF
		done
	done
	(cd "$dir" && git init -q -b main && gitc add -A && gitc commit -qm base && git tag base)
}

# pymodule DIR: 4 files of 10 Hypothesis properties.
pymodule() {
	local dir=$1
	mkdir -p "$dir/tests" "$dir/src"
	echo "props" >"$dir/README.md"
	printf '[pytest]\ntestpaths = tests\npythonpath = .\n' >"$dir/pytest.ini"
	printf 'def total(xs):\n    s = 0\n    for x in xs:\n        s += x\n    return s\n' >"$dir/src/lib.py"
	: >"$dir/src/__init__.py"
	{
		echo "version: 1"
		echo "retry_cap: 2"
		echo "workers: 1"
		echo "random_seeds: $(drawn)"
		echo "properties:"
	} >"$dir/flakegate.yaml"
	for f in 1 2 3 4; do
		{
			echo "from hypothesis import given, strategies as st"
			echo "from src.lib import total"
			for i in $(seq -w 1 10); do
				printf '\n\n@given(st.lists(st.integers(-1000, 1000)), st.integers(0, %d))\ndef test_p%s(xs, k):\n    assert total(xs + [k]) == total(xs) + k\n' "$((10#$i * 7))" "$i"
			done
		} >"$dir/tests/test_f$f.py"
		for i in $(seq -w 1 10); do
			cat >>"$dir/flakegate.yaml" <<EOF
  - path: tests/test_f$f.py
    name: test_p$i
    seeds: $(seedlist)
    run: [$py, -m, pytest, -q, -p, no:cacheprovider, "{path}::{name}", "--hypothesis-seed={seed}"]
    wall_budget: 2m
EOF
		done
	done
	(cd "$dir" && git init -q -b main && gitc add -A && gitc commit -qm base && git tag base)
}

candidate() { # $1: repo, $2: tag
	(cd "$1" && git checkout -q --detach base && echo "$2" >>README.md && gitc commit -qam "$2" && git tag "$2")
}

# check REPO CAND: times one check; fails the bench unless every triple
# passes. With RSS set, samples the flakegate process's VmHWM into $work/rss.
check() {
	local repo=$1 cand=$2
	(
		cd "$repo"
		timed "$fg" check --json --base base --candidate "$cand" >"$work/last.json" 2>"$work/last.err" &
		tpid=$!
		if [ -n "${RSS:-}" ]; then
			hwm=0
			while kill -0 $tpid 2>/dev/null; do
				fpid=$(pgrep -f -n "^$fg check --json --base base --candidate $cand" || true)
				if [ -n "$fpid" ]; then
					v=$(awk '/VmHWM/ {print $2}' "/proc/$fpid/status" 2>/dev/null || echo 0)
					[ "${v:-0}" -gt "$hwm" ] && hwm=$v
				fi
				sleep 0.2
			done
			echo "$hwm" >"$work/rss"
		fi
		wait $tpid || true
	)
	if ! grep -q '"verdict": "pass"' "$work/last.json"; then
		echo "check of $cand in $repo did not pass:"
		tail -20 "$work/last.err"
		exit 3
	fi
	echo "#   check $cand: $(cat "$work/t.last") (wall cpu); $(grep -c '"label": "PASS"' "$work/last.json") PASS; $(grep -m1 'batch of' "$work/last.err" | cut -c1-80)"
}

gobare() { # $1: checkout
	(cd "$1" && timed sh -c 'for s in $0; do go test -count=1 -v ./... -rapid.seed=$s -rapid.nofailfile >/dev/null || exit 1; done' "$(bareseeds "$1")")
	echo "#   bare: $(cat "$work/t.last") (wall cpu)"
}
pybare() {
	(cd "$1" && timed sh -c 'for s in $0; do '"$py"' -m pytest -q -p no:cacheprovider tests --hypothesis-seed=$s >/dev/null || exit 1; done' "$(bareseeds "$1")")
	echo "#   bare: $(cat "$work/t.last") (wall cpu)"
}
# bareseeds REPO: the seeds the last check used (listed and drawn), one
# list for the whole suite: as many seeds as the check ran.
bareseeds() {
	$py -c '
import json, sys
s = json.load(open(sys.argv[1]))
seen = []
for r in s["results"]:
    if r["seed"] not in seen:
        seen.append(r["seed"])
print(" ".join(str(x) for x in seen))' "$work/last.json"
}

coldbuild() { # $1: checkout
	local cold=$work/gocold
	mkdir -p "$cold"
	(cd "$1" && timed env GOCACHE="$cold" go test -count=1 -run '^$' ./... >/dev/null)
	rm -rf "$cold"
	echo "#   cold build: $(cat "$work/t.last") (wall cpu)"
}

declare -a gf gs gb gc gfc gsc gbc gcc pf ps pb pfc psc pbc lf ls lb lsc lbc rss
for r in $(seq "$rounds"); do
	[[ $parts == *" go "* ]] || break
	echo "# round $r: go, 200 triples"
	repo=$work/go-$r
	gomodule "$repo" 4
	candidate "$repo" c1
	candidate "$repo" c2
	check "$repo" c1
	read -r w c <"$work/t.last"; gf+=("$w"); gfc+=("$c")
	check "$repo" c2
	read -r w c <"$work/t.last"; gs+=("$w"); gsc+=("$c")
	gobare "$repo"
	read -r w c <"$work/t.last"; gb+=("$w"); gbc+=("$c")
	coldbuild "$repo"
	read -r w c <"$work/t.last"; gc+=("$w"); gcc+=("$c")
	rm -rf "$repo"
done
for r in $(seq "$rounds"); do
	[[ $parts == *" pytest "* ]] || break
	echo "# round $r: pytest, 200 triples"
	repo=$work/py-$r
	pymodule "$repo"
	candidate "$repo" c1
	candidate "$repo" c2
	check "$repo" c1
	read -r w c <"$work/t.last"; pf+=("$w"); pfc+=("$c")
	check "$repo" c2
	read -r w c <"$work/t.last"; ps+=("$w"); psc+=("$c")
	pybare "$repo"
	read -r w c <"$work/t.last"; pb+=("$w"); pbc+=("$c")
	rm -rf "$repo"
done
for r in $(seq "$rounds"); do
	[[ $parts == *" growth "* ]] || break
	echo "# round $r: go, 1,000 triples"
	repo=$work/big-$r
	gomodule "$repo" 20
	candidate "$repo" c1
	candidate "$repo" c2
	check "$repo" c1
	read -r w c <"$work/t.last"; lf+=("$w")
	RSS=1 check "$repo" c2
	read -r w c <"$work/t.last"; ls+=("$w"); lsc+=("$c"); rss+=("$(cat "$work/rss")")
	gobare "$repo"
	read -r w c <"$work/t.last"; lb+=("$w"); lbc+=("$c")
	rm -rf "$repo"
done

m() { [ $# -gt 0 ] || { echo 0; return; }; printf '%s\n' "$@" | median; }
echo
echo "medians of $rounds rounds (seconds; wall, and CPU of every process; parts:$parts)"
gsm=$(m "${gs[@]}") gbm=$(m "${gb[@]}") gfm=$(m "${gf[@]}") gcm=$(m "${gc[@]}")
echo "go 200 triples:   first check $gfm (cpu $(m "${gfc[@]}")), second check $gsm (cpu $(m "${gsc[@]}")), bare $gbm (cpu $(m "${gbc[@]}")), cold build $gcm (cpu $(m "${gcc[@]}"))"
echo "go ratio second/bare: $(ratio "$gsm" "$gbm")x wall, $(ratio "$(m "${gsc[@]}")" "$(m "${gbc[@]}")")x cpu (aim <= 1.5x)"
echo "go ratio first/(bare+cold build): $(ratio "$gfm" "$(echo "$gbm + $gcm" | bc)")x wall"
psm=$(m "${ps[@]}") pbm=$(m "${pb[@]}")
echo "pytest 200 triples: first check $(m "${pf[@]}") (cpu $(m "${pfc[@]}")), second check $psm (cpu $(m "${psc[@]}")), bare $pbm (cpu $(m "${pbc[@]}"))"
echo "pytest ratio second/bare: $(ratio "$psm" "$pbm")x wall, $(ratio "$(m "${psc[@]}")" "$(m "${pbc[@]}")")x cpu (aim <= 2x)"
lsm=$(m "${ls[@]}") lbm=$(m "${lb[@]}")
echo "go 1,000 triples: first check $(m "${lf[@]}"), second check $lsm (cpu $(m "${lsc[@]}")), bare $lbm (cpu $(m "${lbc[@]}"))"
echo "growth: ratio second/bare $(ratio "$lsm" "$lbm")x at 1,000 triples against $(ratio "$gsm" "$gbm")x at 200 (aim: within 10%)"
echo "flakegate peak RSS (VmHWM) in the 1,000-triple second check: $(m "${rss[@]}") KiB"
echo "# end $(date -u +%Y-%m-%dT%H:%M:%SZ); uptime: $(uptime)"
