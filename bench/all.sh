#!/usr/bin/env bash
# bench/all.sh: every benchmark script whose figure bench/README.md quotes,
# one after the other (never two at once), into one results file:
#
#   bench/results/DATE.txt (UTC date; DATE-HHMM when that file exists)
#
# headed by the date, uptime, nproc, the CPU model, go version, python3 version
# and the commit, then each script's raw output (stdout and stderr) between
# lines that give its start, its end, its exit status and the load average.
# A script that fails or lacks what it needs (the spec, pytest, PostgreSQL)
# says why in its output and exits non-zero; the others still run, and the
# summary at the end lists each script's exit status.
#
# The scripts, in order: classify digest check-overhead sandbox-overhead
# hardening-cost prepare-speed judge-work flake-probe fleet batch. ONLY="classify
# digest" runs a subset (names without .sh, in the order given).
#
# What each needs: classify, the spec whose listing is its peer
# (FLAKEGATE_SPEC, the path of flake-freeze-ledger.txt); digest, openssl;
# judge-work, flake-probe and batch, pytest with hypothesis; prepare-speed and
# flake-probe, go; sandbox-overhead, hardening-cost and the check benchmarks,
# bubblewrap; fleet, a PostgreSQL server (it starts a throwaway one from
# Debian's postgresql, or uses FLAKEGATE_BENCH_DSN; to leave it out, run
# with ONLY set to the others).
#
# Environment: ONLY, RESULTS (the output file instead of
# bench/results/DATE.txt), ROUNDS (passed on to every script), and each
# script's own variables. The binary is built once (make build) and given to
# every script as FLAKEGATE and FLAKEGATE_BIN.
set -uo pipefail

cd "$(dirname "$0")/.."
all=(classify digest check-overhead sandbox-overhead hardening-cost prepare-speed judge-work flake-probe fleet batch)
read -r -a only <<<"${ONLY:-${all[*]}}"
for name in "${only[@]}"; do
	if [[ ! " ${all[*]} " == *" $name "* ]]; then
		echo "all.sh: unknown benchmark $name (want some of: ${all[*]})" >&2
		exit 2
	fi
done

results=${RESULTS:-bench/results/$(date -u +%F).txt}
if [[ -z ${RESULTS:-} && -e $results ]]; then
	results=bench/results/$(date -u +%F-%H%M).txt
fi
mkdir -p "$(dirname "$results")"

if ! make -s build; then
	echo "all.sh: make build failed" >&2
	exit 3
fi
bin=$PWD/bin/flakegate
export FLAKEGATE=$bin FLAKEGATE_BIN=$bin

status=$(mktemp)
trap 'rm -f "$status"' EXIT
{
	commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
	if [[ -n $(git status --porcelain --untracked-files=no 2>/dev/null) ]]; then
		commit="$commit (with uncommitted changes)"
	fi
	echo "# bench/all.sh $(date -u +%FT%TZ)"
	echo "# date: $(date -u)"
	echo "# uptime: $(uptime)"
	echo "# nproc: $(nproc)"
	echo "# cpu: $(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
	echo "# go: $(go version)"
	echo "# python3: $(command -v python3) $(python3 --version 2>&1); /usr/bin/python3: $(/usr/bin/python3 --version 2>&1 || echo none)"
	echo "# commit: $commit"
	echo "# flakegate: $("$bin" version 2>&1 | head -1)"
	echo "# benchmarks: ${only[*]}"
	for name in "${only[@]}"; do
		echo
		echo "=== bench/$name.sh: start $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
		start=$SECONDS
		bench/"$name".sh 2>&1
		rc=$?
		echo "=== bench/$name.sh: exit $rc after $((SECONDS - start)) s, load $(cut -d' ' -f1-3 /proc/loadavg)"
		echo "$name $rc" >>"$status"
	done
	echo
	echo "# summary (exit status per script; non-zero: see its output above)"
	while read -r name rc; do
		echo "#   $name: exit $rc"
	done <"$status"
	echo "# end: $(date -u +%FT%TZ), uptime: $(uptime)"
} 2>&1 | tee "$results"
echo "all.sh: wrote $results" >&2
! grep -qv ' 0$' "$status"
