#!/usr/bin/env bash
# bench/impact.sh: issue 44, "spend the suite's budget where the patch can
# reach". A generated Go module of 10 packages, p0 to p9, each with 4
# tests of 0.5 s; p1, p2 and p3 import p0. One suites: entry (./...,
# seeds [1, 2, 3], impact: true, workers: 2 as the machine's 2 cores).
#
# Timed, side by side in each round, against the bare suite once per
# seed (go test -count=1 -shuffle=S ./... for S in 1 2 3, which runs 2
# packages at once on 2 cores):
#   A. the second check of a patch that adds a function to p9 (1 package
#      of 10): aim <= 0.5x, with p9's tests run 12 times;
#   B. the second check of a patch to p0, which p1, p2 and p3 import:
#      its 4 packages get the runs the budget allows, printed beside the
#      bare run of those 4 packages once per seed.
# Then C: 20 checks of 20 patches that each add a 1-in-3 flake to p9's
# code (a test of p9 fails when a clock's nanoseconds are 0 mod 3), with
# reject_new_flakes: true; each should be rejected.
# ROUNDS rounds (default 3), medians of wall seconds; CPU seconds beside
# them (bench/timed.sh: a cpuacct cgroup's, which counts the sandboxed
# attempts; what /usr/bin/time saw, before, left them out).
set -euo pipefail

cd "$(dirname "$0")/.."
rounds=${ROUNDS:-3}
flakes=${FLAKES:-20}
work=$(mktemp -d /tmp/flakegate-bench-impact.XXXXXX)
chmod 755 "$work"
[ -n "${KEEP:-}" ] || trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
mkdir -p "$work/bin"
fg=${FLAKEGATE:-$work/bin/flakegate}
[ -n "${FLAKEGATE:-}" ] || go build -o "$fg" ./cmd/flakegate

echo "# bench/impact.sh $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "# uptime: $(uptime)"
echo "# nproc: $(nproc)"
echo "# cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
echo "# kernel: $(uname -r); $(bwrap --version); $(go version); uid $(id -u)"
echo "# flakegate: $(git rev-parse --short HEAD)$(git diff --quiet || echo ' + uncommitted changes'); rounds $rounds"

gitc() { git -c user.name=b -c user.email=b@example.com "$@"; }
median() { sort -g | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }

repo=$work/mod
mkdir -p "$repo"
cat >"$repo/go.mod" <<'EOF'
module example.com/tenpkgs

go 1.21
EOF
for i in $(seq 0 9); do
	mkdir -p "$repo/p$i"
	if [ "$i" -ge 1 ] && [ "$i" -le 3 ]; then
		printf 'package p%d\n\nimport "example.com/tenpkgs/p0"\n\n// Value is p0'"'"'s plus %d.\nfunc Value() int { return p0.Value() + %d }\n' "$i" "$i" "$i" >"$repo/p$i/p$i.go"
	else
		printf 'package p%d\n\n// Value is %d.\nfunc Value() int { return %d }\n' "$i" "$i" "$i" >"$repo/p$i/p$i.go"
	fi
	{
		printf 'package p%d\n\nimport (\n\t"testing"\n\t"time"\n)\n' "$i"
		for k in 1 2 3 4; do
			printf '\nfunc TestValue%d(t *testing.T) {\n\ttime.Sleep(500 * time.Millisecond)\n\tif Value() != %d {\n\t\tt.Fatal(Value())\n\t}\n}\n' "$k" "$i"
		done
	} >"$repo/p$i/p${i}_test.go"
done
cat >"$repo/flakegate.yaml" <<'YAML'
version: 1
retry_cap: 2
workers: 2
flake_probe_runs: 0
reject_new_flakes: true
impact: true
suites:
  - path: "./..."
    framework: go
    seeds: [1, 2, 3]
    wall_budget: 10m
YAML
echo "# module: 10 packages of 4 tests of 0.5 s; p1, p2, p3 import p0"
(cd "$repo" && git init -q -b main && gitc add -A && gitc commit -qm base && git tag base)

bench_name=impact
# shellcheck source=bench/timed.sh
. bench/timed.sh # timed CMD...: "WALL CPU" of CMD into $work/t.last

candidate() { # $1: tag, $2: file, $3: content appended
	(cd "$repo" && git checkout -q --detach base && printf '%s' "$3" >>"$2" && git add -A && gitc commit -qm "$1" && git tag "$1")
}
check() { # $1: candidate; prints "VERDICT RESULTS RUNS"
	(cd "$repo" && timed "$fg" check --json --base base --candidate "$1" >"$work/last.json" 2>"$work/last.err") || true
	cp "$work/last.err" "$work/check-$1.err"
	python3 - "$work/last.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
imp = (s.get("impact") or [{}])[0]
print(s["verdict"], len(s["results"]), imp.get("runs", 0), imp.get("affected_tests", 0), imp.get("unaffected_tests", 0))
PY
}
bare() { # $@: packages
	(cd "$repo" && git checkout -q base && timed sh -c 'for s in 1 2 3; do go test -count=1 -shuffle=$s "$@" >/dev/null || exit 1; done' bare "$@")
}

echo "# warm-up: the first check (fills the Go build cache with the base's test log), then a first check of each"
echo "# patched package set, whose base replays the replay cache keeps: the rounds are second checks"
candidate warm README.md "warm"
echo "#   $(check warm) in $(cat "$work/t.last")"
candidate warmA p9/p9.go "
// Warm is new.
func Warm() int { return 0 }
"
echo "#   $(check warmA) in $(cat "$work/t.last")"
candidate warmB p0/p0.go "
// Warm is new.
func Warm() int { return 0 }
"
echo "#   $(check warmB) in $(cat "$work/t.last")"
: >"$work/a"; : >"$work/ab"; : >"$work/b"; : >"$work/bb"
for r in $(seq 1 "$rounds"); do
	echo "# round $r"
	candidate "one$r" p9/p9.go "
// More$r is new.
func More$r() int { return $r }
"
	got=$(check "one$r")
	echo "#   A check one$r (verdict results runs affected unaffected): $got; wall cpu $(cat "$work/t.last")"
	cat "$work/t.last" >>"$work/a"
	bare ./...
	echo "#   bare ./... once per seed: wall cpu $(cat "$work/t.last")"
	cat "$work/t.last" >>"$work/ab"
	candidate "imported$r" p0/p0.go "
// More$r is new.
func More$r() int { return $r }
"
	got=$(check "imported$r")
	echo "#   B check imported$r (verdict results runs affected unaffected): $got; wall cpu $(cat "$work/t.last")"
	cat "$work/t.last" >>"$work/b"
	bare ./p0 ./p1 ./p2 ./p3
	echo "#   bare ./p0 ./p1 ./p2 ./p3 once per seed: wall cpu $(cat "$work/t.last")"
	cat "$work/t.last" >>"$work/bb"
done
col() { awk -v c="$2" '{print $c}' "$1" | median; }
a=$(col "$work/a" 1); ab=$(col "$work/ab" 1); b=$(col "$work/b" 1); bb=$(col "$work/bb" 1)
echo "A: patch to 1 package of 10: check median $a s wall ($(col "$work/a" 2) s CPU); bare suite once per seed median $ab s wall ($(col "$work/ab" 2) s CPU); ratio $(echo "scale=2; $a / $ab" | bc)x (aim <= 0.5x)"
echo "B: patch to p0, which 3 packages import: check median $b s wall ($(col "$work/b" 2) s CPU); bare suite once per seed $ab s: ratio $(echo "scale=2; $b / $ab" | bc)x; bare run of the 4 packages once per seed median $bb s: ratio $(echo "scale=2; $b / $bb" | bc)x"

rejected=0
for k in $(seq 1 "$flakes"); do
	candidate "flake$k" p9/p9.go "
func init() { flake$k() }

// flake$k makes Value wrong in 1 of 3 runs.
func flake$k() {
	if time.Now().UnixNano()%3 == 0 {
		bump = 1
	}
}
"
	# The patch also makes Value read bump.
	(cd "$repo" && sed -i 's|^// Value is 9.|import "time"\n\nvar bump int\n\n// Value is 9.|; s|return 9 }|return 9 + bump }|' p9/p9.go && gitc commit -q --amend -am "flake$k" && git tag -f "flake$k" >/dev/null)
	got=$(check "flake$k")
	echo "#   C check flake$k (verdict results runs affected unaffected): $got; wall cpu $(cat "$work/t.last")"
	case $got in reject*) rejected=$((rejected + 1)) ;; esac
done
echo "C: $rejected of $flakes checks of a patch that adds a 1-in-3 flake to p9 rejected (aim: all)"
echo "# uptime at the end: $(uptime)"
