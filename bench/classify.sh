#!/usr/bin/env bash
# bench/classify.sh: flakegate classify --jsonl against the spec's listing,
# side by side on the same 200,000 records, alternating, 5 rounds, on two
# corpora (bench/genrecords.py):
#
#   large: records of about 1.5 KB, as `flakegate check` writes them
#          (attempts, provenance keys, floats, non-ASCII text); target 10x
#   small: records of about 600 bytes, about a quarter of them with a wrong
#          type that both sides label INCOMPLETE; target 12x
#
# For each corpus:
#   (a) the whole flakegate process:
#       bin/flakegate classify --jsonl bench/out/records.jsonl > /dev/null
#   (b) the listing's in-process Python loop (bench/listing_loop.py): per line
#       json.loads, classify, the listing's hash, the decision as JSON, to
#       /dev/null. Its time excludes interpreter start-up; flakegate's includes
#       everything.
# Before timing, both sides classify the whole corpus and must give the same
# label and the same record_sha256 on every record.
#
# Prints every round and the median ratio python / flakegate on wall time (the
# figure) and on CPU time (a check when the machine is shared: flakegate uses
# every core, the listing one).
#
# The listing is not part of this repository: it is read from the spec at run
# time. Environment: FLAKEGATE_SPEC (the spec; default
# ../shared/spec/flake-freeze-ledger.txt next to the repository), RECORDS
# (default 200000), ROUNDS (default 5), CORPORA (default "large small"),
# FLAKEGATE_BIN (a built binary; default: `make build`, bin/flakegate).
set -euo pipefail

cd "$(dirname "$0")/.."
records=${RECORDS:-200000}
rounds=${ROUNDS:-5}
corpora=${CORPORA:-large small}
spec=${FLAKEGATE_SPEC:-../shared/spec/flake-freeze-ledger.txt}
out=bench/out
mkdir -p "$out"

if [[ ! -f $spec ]]; then
	echo "classify.sh: the spec (the listing is the peer) is not at $spec;" >&2
	echo "classify.sh: set FLAKEGATE_SPEC to the path of flake-freeze-ledger.txt" >&2
	exit 2
fi

bin=${FLAKEGATE_BIN:-bin/flakegate}
if [[ -z ${FLAKEGATE_BIN:-} ]]; then
	make -s build
fi

echo "load: $(uptime)"
for corpus in $corpora; do
	case $corpus in
	large) data=$out/records.jsonl gen=() target=10 ;;
	small) data=$out/records-small.jsonl gen=(--small) target=12 ;;
	*)
		echo "classify.sh: unknown corpus $corpus (want large or small)" >&2
		exit 2
		;;
	esac
	if [[ ! -f $data || ! -f $data.count || $(cat "$data.count") != "$records" ]]; then
		python3 bench/genrecords.py "$data" --count "$records" "${gen[@]}"
		echo "$records" >"$data.count"
	fi
	echo "== $corpus: $data, $(wc -c <"$data") bytes"

	# Both sides must agree on what they read: same number of decisions, the
	# same label and the same hash on every record, before anything is timed.
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
    if x["label"] != y["label"] or x["record_sha256"] != y.get("record_sha256"):
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

	python3 - "${fg[*]}" "${py[*]}" "${fgcpu[*]}" "${pycpu[*]}" "$records" "$corpus" "$target" <<'PY'
import statistics, sys
fg, py, fgc, pyc = ([float(x) for x in a.split()] for a in sys.argv[1:5])
n, corpus, target = int(sys.argv[5]), sys.argv[6], sys.argv[7]
mf, mp = statistics.median(fg), statistics.median(py)
ratios = sorted(p / f for f, p in zip(fg, py))
print(f"{corpus} median: flakegate {mf:.3f}s ({n / mf:,.0f} records/s), python {mp:.3f}s ({n / mp:,.0f} records/s)")
print(f"{corpus} median ratio python/flakegate: {statistics.median(ratios):.1f}x wall"
      f" (rounds {ratios[0]:.1f}x-{ratios[-1]:.1f}x, target {target}x);"
      f" {statistics.median(p / f for f, p in zip(fgc, pyc)):.1f}x CPU time")
PY
done
echo "load: $(uptime)"
