#!/usr/bin/env bash
# bench/flake-probe.sh: what the flake probe costs a check, on the go-rapid
# and pytest-hypothesis examples (needs go, and pytest with hypothesis, on
# PATH).
#
# Each example becomes two repositories under $BENCH_OUT (default
# /tmp/flakegate-bench/flake-probe) that
# differ only in the base config: flake_probe_runs 3 (the default) and 0
# (off). random_seeds 0, the 3 listed seeds, retry_cap 2. The candidate of
# both is the same patch: product code that fails the first attempt of each
# seed (a counter in a folder shared with the sandbox, $FG_STATE) and
# passes afterwards, so every triple is SCHEDULER: the probe's whole cost
# (3 more base runs per triple; none fails, so none stops early) is paid.
# A PASS or a reject triple never runs the probe and costs nothing more.
#
# Side by side in each round, alternating which goes first; the state is
# cleared before each check, and --no-replay-cache makes every check replay
# its base. ROUNDS rounds (default 3). Prints the machine (uptime, nproc,
# CPU model), each round, the medians and the ratios.
# Environment: FLAKEGATE (a built binary; default: go build ./cmd/flakegate),
# ROUNDS, BENCH_OUT.
set -euo pipefail

cd "$(dirname "$0")/.."
root=$PWD
# The repositories live outside the work tree: their Go files are not
# flakegate's (internal/atomicfile's test reads every .go file in it).
out=${BENCH_OUT:-${TMPDIR:-/tmp}/flakegate-bench/flake-probe}
rounds=${ROUNDS:-3}
rm -rf "$out"
mkdir -p "$out/state"
command -v pytest >/dev/null || { echo "pytest is not installed" >&2; exit 2; }
command -v go >/dev/null || { echo "go is not installed" >&2; exit 2; }

fg=${FLAKEGATE:-}
if [ -z "$fg" ]; then
	go build -o bench/out/flakegate ./cmd/flakegate
	fg=$root/bench/out/flakegate
fi
fg=$(cd "$(dirname "$fg")" && pwd)/$(basename "$fg")

export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.com
export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.com
unset FLAKEGATE_LEDGER
export FG_STATE=$out/state
GOCACHE=$(go env GOCACHE)
export GOCACHE

echo "# bench/flake-probe.sh, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "# uptime: $(uptime)"
echo "# nproc: $(nproc)"
echo "# cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
echo "# flakegate: $("$fg" version 2>/dev/null | head -1)"

py_flaky='import os as _os, sys as _sys

_seed = [a.split("=", 1)[1] for a in _sys.argv if a.startswith("--hypothesis-seed=")]
_f = _os.path.join(_os.environ.get("FG_STATE", "/tmp"), "flaky-py-" + (_seed[0] if _seed else "x"))
try:
    with open(_f) as _h:
        _n = int(_h.read())
except (OSError, ValueError):
    _n = 0
with open(_f, "w") as _h:
    _h.write(str(_n + 1))
'
go_flaky='
// flakyFirst is true in the first run of each seed: the bench patch.
var flakyFirst = func() bool {
	seed := "x"
	for _, a := range os.Args {
		if s, ok := strings.CutPrefix(a, "-rapid.seed="); ok {
			seed = s
		}
	}
	f := filepath.Join(os.Getenv("FG_STATE"), "flaky-go-"+seed)
	b, _ := os.ReadFile(f)
	n, _ := strconv.Atoi(string(b))
	os.WriteFile(f, []byte(strconv.Itoa(n+1)), 0o644)
	return n == 0
}()
'

# make_repo DIR EXAMPLE PROBE_RUNS
make_repo() {
	local dir=$1 ex=$2 k=$3
	rm -rf "$dir"
	mkdir -p "$dir"
	cp -r "examples/$ex/." "$dir/"
	(
		cd "$dir"
		rm -rf .hypothesis tests/__pycache__ __pycache__
		sed -i 's/^random_seeds: 1 .*/random_seeds: 0/' flakegate.yaml
		env='[FG_STATE]'
		rw="[\"$FG_STATE\"]"
		if [ "$ex" = go-rapid ]; then env='[FG_STATE, GOCACHE]'; rw="[\"$FG_STATE\", \"$GOCACHE\"]"; fi
		sed -i "s|^properties:|flake_probe_runs: $k\nsandbox:\n  rw: $rw\n  env: $env\nproperties:|" flakegate.yaml
		git init -q -b main
		git add -A
		git commit -q -m base
		git tag base
		if [ "$ex" = go-rapid ]; then
			sed -i 's|^import "time"|import (\n\t"os"\n\t"path/filepath"\n\t"strconv"\n\t"strings"\n\t"time"\n)|' backoff.go
			printf '%s' "$go_flaky" >>backoff.go
			sed -i 's|\tdelays := make(\[\]time.Duration, retries)|\tdelays := make([]time.Duration, retries)\n\tif flakyFirst {\n\t\tlimit = -1\n\t}|' backoff.go
		else
			{ printf '%s\n' "$py_flaky"; cat retry_budget.py; } >retry_budget.py.new
			mv retry_budget.py.new retry_budget.py
			sed -i 's|    delays = \[\]|    delays = []\n    if _n == 0:\n        cap_ms = -1|' retry_budget.py
		fi
		git commit -q -am "a flaky patch"
		git tag cand
	)
}

now() { date +%s.%N; }
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

for ex in go-rapid pytest-hypothesis; do
	make_repo "$out/$ex-probe" "$ex" 3
	make_repo "$out/$ex-off" "$ex" 0
done

# one EX SIDE: one check, timed; prints its labels.
one() {
	local ex=$1 side=$2
	rm -f "$FG_STATE"/flaky-*
	t0=$(now)
	(cd "$out/$ex-$side" && "$fg" check --json --base base --candidate cand --no-replay-cache >"$out/$ex-$side.json" 2>"$out/$ex-$side.err" || true)
	t1=$(now)
	labels=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"]; print(",".join(x["label"]+("/"+x["flake_origin"] if x.get("flake_origin") else "") for x in r))' "$out/$ex-$side.json")
	echo "$ex $side $(echo "$t1 - $t0" | bc) $labels" | tee -a "$out/times"
}

: >"$out/times"
for i in $(seq 1 "$rounds"); do
	echo "## round $i"
	for ex in go-rapid pytest-hypothesis; do
		if ((i % 2)); then one "$ex" probe; one "$ex" off; else one "$ex" off; one "$ex" probe; fi
	done
done

echo "## medians of $rounds rounds"
for ex in go-rapid pytest-hypothesis; do
	p=$(awk -v e=$ex '$1==e && $2=="probe" {print $3}' "$out/times" | median)
	o=$(awk -v e=$ex '$1==e && $2=="off" {print $3}' "$out/times" | median)
	printf '%s: flake_probe_runs 3 %.2fs, 0 %.2fs, ratio %.3f, probe cost %.2fs for 3 SCHEDULER triples\n' "$ex" "$p" "$o" "$(echo "$p / $o" | bc -l)" "$(echo "$p - $o" | bc -l)"
done
echo "# uptime after: $(uptime)"
