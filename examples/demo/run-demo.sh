#!/bin/sh
# run-demo.sh FLAKEGATE DIR: build the demo repository in DIR and run the
# merge check on it twice: the candidate patch (every label), then a patch
# that edits the gate's own config (every triple CONTAMINATED). Between the
# two, a reviewer freezes the SCHEDULER result and the ledger shows it.
set -eu
[ $# -eq 2 ] || { echo "usage: $0 FLAKEGATE DIR" >&2; exit 2; }
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
dir=$2
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$dir"
mkdir -p "$dir/out"
dir=$(cd "$dir" && pwd)
repo=$("$here/make-demo-repo.sh" "$dir")
# The candidate's cache folder, shared with every attempt by the config
# (sandbox.rw and sandbox.env in flakegate.yaml).
export DEMO_CACHE="$dir/cache"
unset FLAKEGATE_LEDGER
cd "$repo"

if [ -t 1 ]; then
	step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
else
	step() { printf '\n== %s\n' "$*"; }
fi

step "flakegate check --base base --candidate candidate --freeze-owner demo@example.com"
set +e
"$bin" check --base base --candidate candidate --out "$dir/out/candidate" \
	--freeze-owner demo@example.com \
	--markdown "$dir/out/candidate.md" --junit "$dir/out/candidate.xml"
code=$?
set -e
echo "exit code: $code (1: the gate rejects the patch)"

sched="$dir/out/candidate/01-props_scheduler.sh-seed-1400"
step "the SCHEDULER record of seed 1400 (the one label that may earn a freeze)"
cat "$sched.json"
step "its decision"
cat "$sched.decision.json"
step "classify every record again, from the files alone"
"$bin" classify "$dir"/out/candidate/*-seed-*[0-9].json | grep -o '"label": *"[A-Z]*"' | sort | uniq -c || true

step "a reviewer freezes it: flakegate freeze grant --allow-new-flake"
# The check granted nothing: the base never failed the seed, so the flake may
# be the patch's own (flake_origin "new"). A person decides that it is not.
"$bin" freeze grant --record "$sched.json" --owner demo@example.com --by reviewer@example.com --allow-new-flake
step "flakegate freeze list"
"$bin" freeze list
"$bin" freeze list --json > "$dir/out/freezes.json"
"$bin" report --html "$dir/out/ledger.html"
echo "the ledger's HTML page: $dir/out/ledger.html"

step "flakegate check --base base --candidate candidate-config (the patch edits flakegate.yaml)"
set +e
"$bin" check --base base --candidate candidate-config --out "$dir/out/candidate-config"
code2=$?
set -e
echo "exit code: $code2 (the diff alone decides: no attempt ran, on either side)"

step "outputs"
echo "records, decisions, transcripts: $dir/out/candidate/"
echo "Markdown report: $dir/out/candidate.md    JUnit: $dir/out/candidate.xml"
echo "the freezes: $dir/out/freezes.json    the ledger's HTML page: $dir/out/ledger.html"
[ "$code" -eq 1 ] && [ "$code2" -eq 1 ]
