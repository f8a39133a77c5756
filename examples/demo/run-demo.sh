#!/bin/sh
# run-demo.sh FLAKEGATE DIR: build the demo repository in DIR and run the
# merge check on it twice: the candidate patch (every label), then a patch
# that edits the gate's own config (every triple CONTAMINATED).
set -eu
[ $# -eq 2 ] || { echo "usage: $0 FLAKEGATE DIR" >&2; exit 2; }
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
dir=$2
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$dir"
mkdir -p "$dir/state"
dir=$(cd "$dir" && pwd)
repo=$("$here/make-demo-repo.sh" "$dir")
export FLAKEGATE_DEMO_STATE="$dir/state"
unset FLAKEGATE_LEDGER
cd "$repo"

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "flakegate check --base base --candidate candidate"
set +e
"$bin" check --base base --candidate candidate --out "$dir/out/candidate" \
	--markdown "$dir/out/candidate.md" --junit "$dir/out/candidate.xml"
code=$?
set -e
echo "exit code: $code (1: the gate rejects the patch)"

step "the SCHEDULER record of seed 1400 (the one label that may earn a freeze)"
cat "$dir/out/candidate/01-props_scheduler.sh-seed-1400.json"
step "its decision"
cat "$dir/out/candidate/01-props_scheduler.sh-seed-1400.decision.json"
step "classify every record again, from the files alone"
"$bin" classify "$dir"/out/candidate/*-seed-*[0-9].json | grep -o '"label": *"[A-Z]*"' | sort | uniq -c || true

step "flakegate check --base base --candidate candidate-config (the patch edits flakegate.yaml)"
set +e
"$bin" check --base base --candidate candidate-config --out "$dir/out/candidate-config"
code2=$?
set -e
echo "exit code: $code2 (the diff alone decides: no attempt ran, on either side)"

step "outputs"
echo "records, decisions, transcripts: $dir/out/candidate/"
echo "Markdown report: $dir/out/candidate.md    JUnit: $dir/out/candidate.xml"
[ "$code" -eq 1 ] && [ "$code2" -eq 1 ]
