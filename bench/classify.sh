#!/usr/bin/env bash
# bench/classify.sh: flakegate classify --jsonl against the spec's listing,
# side by side on the same 200,000 realistic records, alternating, 5 rounds.
#
#   (a) the whole flakegate process:
#       bench/out/flakegate classify --jsonl bench/out/records.jsonl > /dev/null
#   (b) the listing's in-process Python loop (bench/listing_loop.py): per line
#       json.loads, classify, the listing's hash, the decision as JSON, to
#       /dev/null. Its time excludes interpreter start-up; flakegate's includes
#       everything.
#
# Prints every round and the median ratio python / flakegate (target 10x),
# on wall time (the figure) and on CPU time (a check when the machine is
# shared: flakegate uses every core, the listing one).
# Environment: RECORDS (default 200000), ROUNDS (default 5), FLAKEGATE_SPEC
# (the spec; default ../shared/spec/flake-freeze-ledger.txt from the repo root),
# FLAKEGATE_BIN (a built binary to use instead of building one).
set -euo pipefail

cd "$(dirname "$0")/.."
records=${RECORDS:-200000}
rounds=${ROUNDS:-5}
spec=${FLAKEGATE_SPEC:-../shared/spec/flake-freeze-ledger.txt}
out=bench/out
data=$out/records.jsonl
mkdir -p "$out"

if [[ ! -f $spec ]]; then
	echo "classify.sh: spec not found: $spec (set FLAKEGATE_SPEC)" >&2
	exit 2
fi

bin=$out/flakegate
if [[ -n ${FLAKEGATE_BIN:-} ]]; then
	bin=$FLAKEGATE_BIN
else
	go build -o "$bin" ./cmd/flakegate
fi

if [[ ! -f $data || ! -f $data.count || $(cat "$data.count") != "$records" ]]; then
	python3 bench/genrecords.py "$data" --count "$records"
	echo "$records" >"$data.count"
fi

# Both sides must agree on what they read: same number of decisions and the
# same hashes on a sample before anything is timed.
"$bin" classify --jsonl "$data" >"$out/flakegate.decisions"
python3 bench/listing_loop.py "$data" --spec "$spec" --out "$out/listing.decisions" >/dev/null
python3 - "$out/flakegate.decisions" "$out/listing.decisions" <<'PY'
import json, sys
a = open(sys.argv[1], encoding="utf-8").read().splitlines()
b = open(sys.argv[2], encoding="utf-8").read().splitlines()
assert len(a) == len(b), f"{len(a)} flakegate decisions, {len(b)} listing decisions"
labels, diff = {}, 0
for x, y in zip(a, b):
    x, y = json.loads(x), json.loads(y)
    labels[x["label"]] = labels.get(x["label"], 0) + 1
    if x["label"] != y["label"] or x["record_sha256"] != y["record_sha256"]:
        diff += 1
print(f"records: {len(a)}, labels {dict(sorted(labels.items()))}, label or hash differences: {diff}")
sys.exit(1 if diff else 0)
PY
rm -f "$out/flakegate.decisions" "$out/listing.decisions"

# One round: flakegate as a whole process (wall, and user+sys CPU from
# bash's time), then the Python loop (its own wall and CPU seconds).
fg=()
py=()
fgcpu=()
pycpu=()
for ((i = 1; i <= rounds; i++)); do
	read -r fw fu fs < <({ TIMEFORMAT='%R %U %S'; time "$bin" classify --jsonl "$data" >/dev/null; } 2>&1)
	read -r pw pc _ < <(python3 bench/listing_loop.py "$data" --spec "$spec")
	fc=$(echo "$fu + $fs" | bc -l)
	fg+=("$fw")
	py+=("$pw")
	fgcpu+=("$fc")
	pycpu+=("$pc")
	printf 'round %d: flakegate %.3fs (cpu %.3fs)  python %.3fs (cpu %.3fs)  ratio %.1fx (cpu %.1fx)\n' \
		"$i" "$fw" "$fc" "$pw" "$pc" "$(echo "$pw / $fw" | bc -l)" "$(echo "$pc / $fc" | bc -l)"
done

python3 - "${fg[*]}" "${py[*]}" "${fgcpu[*]}" "${pycpu[*]}" "$records" <<'PY'
import statistics, sys
fg, py, fgc, pyc = ([float(x) for x in a.split()] for a in sys.argv[1:5])
n = int(sys.argv[5])
mf, mp = statistics.median(fg), statistics.median(py)
print(f"median: flakegate {mf:.3f}s ({n / mf:,.0f} records/s), python {mp:.3f}s ({n / mp:,.0f} records/s)")
print(f"median ratio python/flakegate: {statistics.median(p / f for f, p in zip(fg, py)):.1f}x wall"
      f" (target 10x, aim 20x); {statistics.median(p / f for f, p in zip(fgc, pyc)):.1f}x CPU time")
PY
