#!/usr/bin/env bash
# bench/prepare-speed.sh: issue 17, "prepare once, attempt many", side by
# side with the bare peer in one run.
#
# go:     examples/go-rapid (rapid properties), 8 seeds, retry_cap 2, a
#         harmless candidate (README). Timed: the whole `check --json` of a
#         NEW candidate commit after a first check (base results and
#         prepared layers reused), against the same 8 `go test -count=1
#         -run ^TestScheduleProperties$ . -rapid.seed=N ...` run bare, one
#         after the other, in a checkout with the host's warm cache.
#         Also the first check (empty flakegate state) against bare plus
#         one cold build (GOCACHE emptied for that one build).
# python: a package whose tests import a module only its build step
#         generates (prepare: python3 gen.py), 8 seeds, pytest+hypothesis;
#         the check of a new candidate against bare: gen.py once, then the
#         8 pytest runs.
# reuse:  5 candidates on one base of the python package, one check each:
#         how many times the base's and the candidates' prepares ran.
#
# ROUNDS rounds (default 3), medians; ratios = check / bare. Aim: <= 1.3x.
# ONLY=go runs the go part alone.
set -euo pipefail

cd "$(dirname "$0")/.."
rounds=${ROUNDS:-3}
work=$(mktemp -d /tmp/flakegate-bench-prepare.XXXXXX)
chmod 755 "$work"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin" # its own folder: flakegate hides the folder of its binary from the attempts
fg=${FLAKEGATE:-$work/bin/flakegate}
[ -n "${FLAKEGATE:-}" ] || go build -o "$fg" ./cmd/flakegate

echo "# bench/prepare-speed.sh $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "# uptime: $(uptime)"
echo "# nproc: $(nproc)"
echo "# cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
echo "# kernel: $(uname -r); $(bwrap --version); $(go version); uid $(id -u)"
echo "# flakegate: $(git rev-parse --short HEAD)$(git diff --quiet || echo ' + uncommitted changes')"

gitc() { git -c user.name=b -c user.email=b@example.com "$@"; }
now() { date +%s.%N; }
median() { sort -g | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
seeds="1400 1401 1402 1403 1404 1405 1406 1407"

# --- go -------------------------------------------------------------------
goinit() { # $1: folder
	mkdir -p "$1" && cp -r examples/go-rapid/. "$1/"
	(cd "$1" && sed -i 's/^random_seeds: 1.*/random_seeds: 0/; s/seeds: \[1400, 1401, 1402\]/seeds: [1400, 1401, 1402, 1403, 1404, 1405, 1406, 1407]/' flakegate.yaml &&
		git init -q -b main && gitc add -A && gitc commit -qm base && git tag base)
}
gobare() { # $1: checkout
	(cd "$1" && for s in $seeds; do
		go test -count=1 -run '^TestScheduleProperties$' . -rapid.seed=$s -rapid.checks=200 -rapid.nofailfile -fixture=testdata/limits.json >/dev/null
	done)
}
candidate() { # $1: repo, $2: tag
	(cd "$1" && git checkout -q --detach base && echo "$2" >> README.md && gitc commit -qam "$2" && git tag "$2")
}
check() { # $1: repo, $2: candidate
	(cd "$1" && "$fg" check --json --base base --candidate "$2" >"$work/last.json" 2>"$work/last.err") || {
		code=$?
		[ $code -le 1 ] || { cat "$work/last.err"; exit 3; }
	}
}

declare -a gfirst gsecond gbare gcold
for r in $(seq "$rounds"); do
	repo=$work/go-$r
	goinit "$repo"
	candidate "$repo" c1
	candidate "$repo" c2
	t0=$(now); check "$repo" c1; t1=$(now)
	grep -q '"verdict": "pass"' "$work/last.json" || { echo "go: first check did not pass"; cat "$work/last.err"; exit 3; }
	t2=$(now); check "$repo" c2; t3=$(now)
	t4=$(now); gobare "$repo"; t5=$(now)
	cold=$work/gocold-$r
	mkdir -p "$cold"
	t6=$(now); (cd "$repo" && GOCACHE=$cold go test -count=1 -run '^$' . >/dev/null); t7=$(now)
	rm -rf "$cold"
	gfirst+=("$(echo "$t1 - $t0" | bc)"); gsecond+=("$(echo "$t3 - $t2" | bc)")
	gbare+=("$(echo "$t5 - $t4" | bc)"); gcold+=("$(echo "$t7 - $t6" | bc)")
	echo "go round $r: first check ${gfirst[-1]} s, second check ${gsecond[-1]} s, bare 8 runs ${gbare[-1]} s, one cold build ${gcold[-1]} s"
done
gf=$(printf '%s\n' "${gfirst[@]}" | median); gs=$(printf '%s\n' "${gsecond[@]}" | median)
gb=$(printf '%s\n' "${gbare[@]}" | median); gc=$(printf '%s\n' "${gcold[@]}" | median)
echo "go medians: second check $gs s vs bare $gb s: $(echo "scale=2; $gs / $gb" | bc)x (aim <= 1.3x)"
echo "go medians: first check $gf s vs bare + one cold build $(echo "$gb + $gc" | bc) s: $(echo "scale=2; $gf / ($gb + $gc)" | bc)x"
[ "${ONLY:-}" != go ] || exit 0

# --- python -----------------------------------------------------------------
pyinit() { # $1: folder, $2: state folder
	mkdir -p "$1/pkg" "$1/tests"
	cat > "$1/flakegate.yaml" <<YAML
version: 1
retry_cap: 2
sandbox:
  rw: ["$2"]
prepare:
  run: [sh, -c, "echo run >> $2/prepares-\$(cat side) && python3 gen.py"]
  budget: 1m
properties:
  - path: tests/test_clamp.py
    name: test_clamp
    seeds: [$(echo $seeds | tr ' ' ',')]
    run: [pytest, -q, -p, no:cacheprovider, "{path}::{name}", "--hypothesis-seed={seed}"]
    wall_budget: 60s
YAML
	printf 'import pathlib\npathlib.Path("pkg/_generated.py").write_text("LIMIT = 100\\n")\n' > "$1/gen.py"
	printf '\n' > "$1/conftest.py"
	printf 'from pkg._generated import LIMIT\n\ndef clamp(x):\n    return min(x, LIMIT)\n' > "$1/pkg/__init__.py"
	printf 'from hypothesis import given, strategies as st\nfrom pkg import clamp, LIMIT\n\n@given(st.integers())\ndef test_clamp(x):\n    assert clamp(x) <= LIMIT\n' > "$1/tests/test_clamp.py"
	echo base > "$1/side"
	(cd "$1" && git init -q -b main && gitc add -A && gitc commit -qm base && git tag base)
}
pycandidate() { # $1: repo, $2: tag
	(cd "$1" && git checkout -q --detach base && echo "$2" > side && gitc commit -qam "$2" && git tag "$2")
}
pybare() { # $1: checkout
	(cd "$1" && python3 gen.py && for s in $seeds; do
		pytest -q -p no:cacheprovider tests/test_clamp.py::test_clamp --hypothesis-seed=$s >/dev/null
	done; rm -f pkg/_generated.py)
}

declare -a psecond pbare
for r in $(seq "$rounds"); do
	repo=$work/py-$r state=$work/py-state-$r
	mkdir -p "$state"
	pyinit "$repo" "$state"
	pycandidate "$repo" c1
	pycandidate "$repo" c2
	check "$repo" c1
	grep -q '"verdict": "pass"' "$work/last.json" || { echo "python: first check did not pass"; cat "$work/last.err"; exit 3; }
	t0=$(now); check "$repo" c2; t1=$(now)
	(cd "$repo" && git checkout -q c2)
	t2=$(now); pybare "$repo"; t3=$(now)
	psecond+=("$(echo "$t1 - $t0" | bc)"); pbare+=("$(echo "$t3 - $t2" | bc)")
	echo "python round $r: check of a new candidate ${psecond[-1]} s (its prepare included: $(grep -o 'prepare candidate: [^)]*)' "$work/last.err")), bare (gen once + 8 runs) ${pbare[-1]} s"
done
ps=$(printf '%s\n' "${psecond[@]}" | median); pb=$(printf '%s\n' "${pbare[@]}" | median)
echo "python medians: check $ps s vs bare $pb s: $(echo "scale=2; $ps / $pb" | bc)x (aim <= 1.3x)"

# --- base reuse -------------------------------------------------------------
repo=$work/reuse state=$work/reuse-state
mkdir -p "$state"
pyinit "$repo" "$state"
for i in 1 2 3 4 5; do
	pycandidate "$repo" "k$i"
	t0=$(now); check "$repo" "k$i"; t1=$(now)
	echo "reuse: candidate $i: $(echo "$t1 - $t0" | bc) s; $(grep -o 'prepare [a-z]*: [^)]*)' "$work/last.err" | tr '\n' ' ')"
done
echo "reuse: base prepare ran $(wc -l < "$state/prepares-base") time(s) for 5 candidates; candidate prepares: $(cat "$state"/prepares-k* | wc -l)"
