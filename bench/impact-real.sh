#!/usr/bin/env bash
# bench/impact-real.sh: issue 44 on real projects. For each project, a
# suite with impact: true is the base; a patch that changes one module of
# the project's code is checked (timed), beside the bare suite once per
# seed, and for go-cmp beside the same patch checked with impact: false
# (every test, every seed; packaging's 1,751 tests would take a quarter
# of an hour per check that way). Each project's figures: the tests
# impact found unaffected, the runs of the affected ones, and the wall
# and CPU seconds (bench/timed.sh: a cpuacct cgroup's, which counts the
# sandboxed attempts; what /usr/bin/time saw, before, left them out).
#
# Projects, each patched as an agent patches: a function added to one
# module of the project's code and a test of it beside the old ones in
# that module's test file:
#   go:     github.com/google/go-cmp v0.7.0 from the Go module proxy
#           (go mod download); suite ./..., seeds [1, 2, 3]; the patch
#           goes to cmp/cmpopts/equate.go and cmp/cmpopts/util_test.go.
#   pytest: github.com/mahmoud/boltons, a git clone at $BOLTONS (default
#           /work/.mirror/mahmoud+boltons/repo, fetched from GitHub);
#           suite tests, seeds [1, 2, 3], three tests excluded by name
#           (test_basic and test_scrub: ecoutils' two run `uname -p`, and
#           a session that starts a process makes every change reach
#           every test; urlutils' test_basic shares the name); the patch
#           goes to boltons/mathutils.py and tests/test_mathutils.py.
#           Needs python3-pytest (Debian).
# Earlier runs (bench/results/2026-12-06-2250-impact-real.txt) used
# pypa/packaging: there every test reaches src/packaging/tags.py, which
# uses subprocess, so impact leaves nothing out.
# ROUNDS rounds (default 3), medians.
set -euo pipefail

cd "$(dirname "$0")/.."
rounds=${ROUNDS:-3}
boltons=${BOLTONS:-/work/.mirror/mahmoud+boltons/repo}
work=$(mktemp -d /tmp/flakegate-bench-impact-real.XXXXXX)
chmod 755 "$work"
[ -n "${KEEP:-}" ] || trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
mkdir -p "$work/bin"
fg=${FLAKEGATE:-$work/bin/flakegate}
[ -n "${FLAKEGATE:-}" ] || go build -o "$fg" ./cmd/flakegate

echo "# bench/impact-real.sh $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "# uptime: $(uptime)"
echo "# nproc: $(nproc)"
echo "# cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
echo "# kernel: $(uname -r); $(bwrap --version); $(go version); $(/usr/bin/python3 --version); uid $(id -u)"
echo "# flakegate: $(git rev-parse --short HEAD)$(git diff --quiet || echo ' + uncommitted changes'); rounds $rounds"

gitc() { git -c user.name=b -c user.email=b@example.com "$@"; }
median() { sort -g | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
bench_name=impact-real
# shellcheck source=bench/timed.sh
. bench/timed.sh # timed CMD...: "WALL CPU" of CMD into $work/t.last

# check REPO BASE CAND: prints "VERDICT RESULTS RUNS AFFECTED UNAFFECTED".
check() {
	(cd "$1" && timed "$fg" check --json --base "$2" --candidate "$3" >"$work/last.json" 2>"$work/last.err") || true
	python3 - "$work/last.json" "$work/last.err" <<'PY'
import json, sys
try:
    s = json.load(open(sys.argv[1]))
except Exception:
    print("error:", open(sys.argv[2]).read()[-400:].replace("\n", " | "))
    sys.exit(0)
imp = (s.get("impact") or [{}])[0]
print(s["verdict"], len(s["results"]), imp.get("runs", "-"), imp.get("affected_tests", "-"), imp.get("unaffected_tests", "-"))
PY
}

# project NAME OFF REPO FILE TEXT TESTFILE TESTTEXT BARE...: the rounds
# of one project; a patch appends TEXT to FILE and TESTTEXT to TESTFILE,
# with @R@ the round (0 for the warm-up). The warm-up checks a first patch of PATCHFILE (the first
# check of the base: caches, the session log, the base replays of the
# tests it reaches); each round checks another. OFF=1 also checks each
# patch with impact: false, on a base commit of its own (whose first
# check replays every test on the base).
project() {
	local name=$1 off=$2 repo=$3 file=$4 text=$5 tfile=$6 ttext=$7
	shift 7
	local bases=base
	if [ "$off" = 1 ]; then
		bases="base base-off"
		(cd "$repo" && git checkout -q base && git checkout -q -b offbase && sed -i 's/^impact: true/impact: false/' flakegate.yaml &&
			gitc commit -qam "impact off" && git tag base-off)
	fi
	for b in $bases; do
		(cd "$repo" && git checkout -q --detach "$b" && printf '%s' "${text//@R@/0}" >>"$file" && printf '%s' "${ttext//@R@/0}" >>"$tfile" && git add -A && gitc commit -qm warm && git tag "warm-$b")
		echo "# $name warm-up check on $b: $(check "$repo" "$b" "warm-$b"); wall cpu $(cat "$work/t.last")"
	done
	: >"$work/on"; : >"$work/off"; : >"$work/bare"
	for r in $(seq 1 "$rounds"); do
		for b in $bases; do
			(cd "$repo" && git checkout -q --detach "$b" && printf '%s' "${text//@R@/$r}" >>"$file" && printf '%s' "${ttext//@R@/$r}" >>"$tfile" && git add -A && gitc commit -qm "patch $r" && git tag "p$r-$b")
		done
		got=$(check "$repo" base "p$r-base")
		echo "#   $name round $r impact on (verdict results runs affected unaffected): $got; wall cpu $(cat "$work/t.last")"
		cat "$work/t.last" >>"$work/on"
		if [ "$off" = 1 ]; then
			got=$(check "$repo" base-off "p$r-base-off")
			echo "#   $name round $r impact off (verdict results): $got; wall cpu $(cat "$work/t.last")"
			cat "$work/t.last" >>"$work/off"
		fi
		(cd "$repo" && git checkout -q base && timed "$@")
		echo "#   $name round $r bare suite once per seed: wall cpu $(cat "$work/t.last")"
		cat "$work/t.last" >>"$work/bare"
	done
	col() { awk -v c="$2" '{print $c}' "$1" | median; }
	local on bare line
	on=$(col "$work/on" 1); bare=$(col "$work/bare" 1)
	line="$name: impact on median $on s wall ($(col "$work/on" 2) s CPU); bare suite once per seed $bare s ($(col "$work/bare" 2) s CPU); on/bare $(echo "scale=2; $on / $bare" | bc)x"
	if [ "$off" = 1 ]; then
		local o
		o=$(col "$work/off" 1)
		line="$line; impact off $o s ($(col "$work/off" 2) s CPU), off/bare $(echo "scale=2; $o / $bare" | bc)x, on/off $(echo "scale=2; $on / $o" | bc)x"
	fi
	echo "$line"
}

# go-cmp.
go mod download -json github.com/google/go-cmp@v0.7.0 >"$work/gocmp.json"
src=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["Dir"])' "$work/gocmp.json")
repo=$work/go-cmp
cp -r "$src" "$repo"
chmod -R u+w "$repo"
cat >"$repo/flakegate.yaml" <<'YAML'
version: 1
retry_cap: 2
workers: 2
flake_probe_runs: 0
impact: true
suites:
  - path: "./..."
    framework: go
    seeds: [1, 2, 3]
    wall_budget: 10m
YAML
(cd "$repo" && git init -q -b main && gitc add -A && gitc commit -qm base && git tag base)
echo "# go: github.com/google/go-cmp v0.7.0, $(cd "$repo" && go list ./... | wc -l) packages, $(cd "$repo" && go test -list . ./... 2>/dev/null | grep -c '^Test') tests"
project go-cmp 1 "$repo" cmp/cmpopts/equate.go "
// EquateNothing@R@ is new.
func EquateNothing@R@() bool { return @R@ >= 0 }
" cmp/cmpopts/util_test.go "
func TestEquateNothing@R@(t *testing.T) {
	if !EquateNothing@R@() {
		t.Fatal(\"EquateNothing@R@\")
	}
}
" sh -c 'for s in 1 2 3; do go test -count=1 -shuffle=$s ./... >/dev/null || exit 1; done'

# boltons.
repo=$work/boltons
git clone -q "$boltons" "$repo"
cat >"$repo/flakegate.yaml" <<'YAML'
version: 1
retry_cap: 2
workers: 2
flake_probe_runs: 0
impact: true
suites:
  - path: tests
    framework: pytest
    seeds: [1, 2, 3]
    wall_budget: 10m
    exclude: ["test_basic", "test_scrub"]
YAML
(cd "$repo" && gitc add -A && gitc commit -qm "flakegate" && git tag base)
desel="--deselect tests/test_ecoutils.py::test_basic --deselect tests/test_ecoutils.py::test_scrub --deselect tests/test_urlutils.py::test_basic"
echo "# pytest: github.com/mahmoud/boltons $(cd "$repo" && git rev-parse --short HEAD~1), $(cd "$repo" && /usr/bin/python3 -m pytest tests -q --co -p no:cacheprovider $desel 2>/dev/null | grep -c '::') tests gated"
project boltons 1 "$repo" boltons/mathutils.py "

def _nothing_@R@():
    return @R@
" tests/test_mathutils.py "

def test_nothing_@R@():
    from boltons.mathutils import _nothing_@R@
    assert _nothing_@R@() == @R@
" sh -c "for s in 1 2 3; do /usr/bin/python3 -m pytest tests -q -p no:cacheprovider $desel >/dev/null || exit 1; done"
echo "# uptime at the end: $(uptime)"
