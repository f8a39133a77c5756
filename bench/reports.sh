#!/usr/bin/env bash
# bench/reports.sh: how long the reports of a 6,000-result check summary
# take to write (2,000 Go tests × 3 order seeds in 40 packages, plus 4
# property triples), against the peer measured side by side in the same
# run: encoding the same summary as JSON, which check --json does for every
# check anyway.
#
# The test binary of ./report is built once; each round runs
# BenchmarkSuiteReports once (every report, then the peer; -benchtime
# BENCHTIME, default 10x), ROUNDS rounds (default 5). Prints each round's
# raw output, then per report the median ns/op with its range and the
# median ratio report / json (below 1: the report costs less than the JSON
# summary).
#
# Environment: ROUNDS, BENCHTIME.
set -euo pipefail

cd "$(dirname "$0")/.."
rounds=${ROUNDS:-5}
benchtime=${BENCHTIME:-10x}
out=bench/out
mkdir -p "$out"
go test -c -o "$out/report.test" ./report
echo "# reports.sh: $(date -u +%FT%TZ)"
echo "# uptime: $(uptime)"
echo "# nproc: $(nproc)"
echo "# cpu: $(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
echo "# go: $(go version)"
echo "# commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
raw=$(mktemp)
trap 'rm -f "$raw"' EXIT
for i in $(seq 1 "$rounds"); do
	echo "## round $i, load $(cut -d' ' -f1-3 /proc/loadavg)"
	(cd report && "../$out/report.test" -test.run '^$' -test.bench 'BenchmarkSuiteReports' -test.benchtime "$benchtime") | tee -a "$raw" | grep '^Benchmark'
done
python3 - "$raw" <<'EOF'
import re, statistics, sys
rounds = {}
for line in open(sys.argv[1]):
    m = re.match(r"BenchmarkSuiteReports/(\w+)-\d+\s+\d+\s+(\d+) ns/op", line)
    if m:
        rounds.setdefault(m.group(1), []).append(int(m.group(2)))
peer = rounds.get("json")
if not peer:
    sys.exit("reports.sh: no json rounds in the output")
print("\n# medians over %d rounds (ms per 6,004-result summary); ratio = report / json, per round then median" % len(peer))
for name, ns in rounds.items():
    ratios = [a / b for a, b in zip(ns, peer)]
    print("%-9s median %8.1f ms (rounds %.1f-%.1f)   ratio to json %.2fx (rounds %.2f-%.2f)" % (
        name, statistics.median(ns) / 1e6, min(ns) / 1e6, max(ns) / 1e6,
        statistics.median(ratios), min(ratios), max(ratios)))
EOF
echo "# end: $(date -u +%FT%TZ), uptime: $(uptime)"
