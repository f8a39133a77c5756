#!/usr/bin/env bash
# bench/golink.sh: what `go test` spends on a run besides the tests, in a
# warm build cache, outside any sandbox: one package of 4 tests of 0.5 s
# (bench/impact.sh's p9), run ROUNDS times (default 5) each way, side by
# side:
#   go:  go test -json -count=1 -shuffle=1 ./p9 (links the test binary
#        on every run: Go keeps no linked test binary);
#   bin: the same test binary, built once with go test -c, run by go tool
#        test2json as go test runs it (-test.v=test2json, in p9's folder).
# The difference is the link and the go command's own work per run: what
# every run of an affected package pays (issue 44's 12 runs).
# Then, ROUNDS times each, the CPU (user + system, every process) of
# starting test2json with no input two ways: go tool test2json, and the
# executable go tool -n test2json names (what a kept binary's attempt
# runs, gocache/binary.go).
set -euo pipefail

cd "$(dirname "$0")/.."
rounds=${ROUNDS:-5}
work=$(mktemp -d /tmp/flakegate-bench-golink.XXXXXX)
trap 'rm -rf "$work"' EXIT

echo "# bench/golink.sh $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "# uptime: $(uptime)"
echo "# nproc: $(nproc)"
echo "# cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
echo "# $(go version); rounds $rounds"
median() { sort -g | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }

mkdir -p "$work/mod/p9"
printf 'module example.com/golink\n\ngo 1.21\n' >"$work/mod/go.mod"
printf 'package p9\n\n// Value is 9.\nfunc Value() int { return 9 }\n' >"$work/mod/p9/p9.go"
{
	printf 'package p9\n\nimport (\n\t"testing"\n\t"time"\n)\n'
	for k in 1 2 3 4; do
		printf '\nfunc TestValue%d(t *testing.T) {\n\ttime.Sleep(500 * time.Millisecond)\n\tif Value() != 9 {\n\t\tt.Fatal(Value())\n\t}\n}\n' "$k"
	done
} >"$work/mod/p9/p9_test.go"
cd "$work/mod"
go test -count=1 ./p9 >/dev/null # warm: compiled and vetted
go test -c -o "$work/p9.test" ./p9
secs() { local s e; s=$(date +%s.%N); "$@" >/dev/null; e=$(date +%s.%N); echo "$e - $s" | bc; }
for r in $(seq 1 "$rounds"); do
	g=$(secs go test -json -count=1 -shuffle=1 ./p9)
	b=$(cd p9 && secs go tool test2json -t "$work/p9.test" -test.v=test2json -test.paniconexit0 -test.shuffle=1 -test.count=1)
	echo "# round $r: go test $g s, binary $b s"
	echo "$g" >>"$work/g"
	echo "$b" >>"$work/b"
done
g=$(median <"$work/g")
b=$(median <"$work/b")
echo "go test -json: median $g s; the binary built once, run by test2json: median $b s; per run the go command and its link cost $(echo "$g - $b" | bc) s ($(echo "scale=2; $g / $b" | bc)x)"
cpu() { /usr/bin/time -f "%U %S" -o "$work/t" "$@" </dev/null >/dev/null; awk '{print $1 + $2}' "$work/t"; }
tool=$(go tool -n test2json)
for r in $(seq 1 "$rounds"); do
	a=$(cpu go tool test2json)
	d=$(cpu "$tool")
	echo "# round $r: go tool test2json $a s CPU, the executable $d s CPU"
	echo "$a" >>"$work/a"
	echo "$d" >>"$work/d"
done
a=$(median <"$work/a")
d=$(median <"$work/d")
echo "go tool test2json: median $a s CPU; the executable itself: median $d s CPU; per run go tool costs $(echo "$a - $d" | bc) s of CPU"
echo "# uptime at the end: $(uptime)"
