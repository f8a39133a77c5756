#!/usr/bin/env bash
# bench/classify.sh: flakegate classify --jsonl against the spec's listing,
# side by side on the same 200,000 records, alternating, 5 rounds, on three
# corpora (bench/genrecords.py):
#
#   large: records of about 1.5 KB, as `flakegate check` writes them
#          (attempts, provenance keys, floats, non-ASCII text)
#   small: records of about 600 bytes, about a quarter of them with a wrong
#          type that both sides label INCOMPLETE
#   python-spaced: the small records as a Python producer writes them with
#          json.dumps's defaults (", " and ": "), seeds above 2**53 and
#          null extras, in 36 key sequences
#
# Target on every corpus: 10x in wall time, 4x in CPU time.
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
# time. Environment: FLAKEGATE_SPEC (the path of the spec, required), RECORDS
# (default 200000), ROUNDS (default 5), CORPORA (default "large small
# python-spaced"),
# FLAKEGATE_BIN (a built binary; default: `make build`, bin/flakegate), PYTHON
# (the peer's interpreter; see below).
set -euo pipefail

cd "$(dirname "$0")/.."
records=${RECORDS:-200000}
rounds=${ROUNDS:-5}
corpora=${CORPORA:-large small python-spaced}
spec=${FLAKEGATE_SPEC:-}
out=bench/out
mkdir -p "$out"

if [[ -z $spec || ! -f $spec ]]; then
	echo "classify.sh: the spec (its listing is the peer) is not at '$spec';" >&2
	echo "classify.sh: set FLAKEGATE_SPEC to the path of flake-freeze-ledger.txt" >&2
	exit 2
fi

# The peer's interpreter: PYTHON, else the distribution's /usr/bin/python3
# when there is one, else python3 on PATH. Distributions build CPython with
# profile-guided optimization; a plain build (pyenv's, say) ran the
# listing's loop 1.1x-1.6x slower here, which would flatter flakegate.
python=${PYTHON:-}
if [[ -z $python ]]; then
	python=python3
	[[ -x /usr/bin/python3 ]] && python=/usr/bin/python3
fi

bin=${FLAKEGATE_BIN:-bin/flakegate}
if [[ -z ${FLAKEGATE_BIN:-} ]]; then
	make -s build
fi

echo "load: $(uptime)"
echo "peer: $python, Python $("$python" -c 'import platform; print(platform.python_version())')"
echo "machine: $(nproc) CPUs, $(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
for corpus in $corpora; do
	case $corpus in
	large) data=$out/records.jsonl gen=() ;;
	small) data=$out/records-small.jsonl gen=(--small) ;;
	python-spaced) data=$out/records-python-spaced.jsonl gen=(--python-spaced) ;;
	*)
		echo "classify.sh: unknown corpus $corpus (want large, small or python-spaced)" >&2
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
	"$python" bench/listing_loop.py "$data" --spec "$spec" --out "$out/listing.decisions" >/dev/null
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
	# bash's time), and the Python loop (its own wall and CPU seconds); odd
	# rounds start with flakegate, even rounds with the listing.
	fg=()
	py=()
	fgcpu=()
	pycpu=()
	for ((i = 1; i <= rounds; i++)); do
		if ((i % 2)); then
			read -r fw fu fs < <({ TIMEFORMAT='%R %U %S'; time "$bin" classify --jsonl "$data" >/dev/null; } 2>&1)
			read -r pw pc _ < <("$python" bench/listing_loop.py "$data" --spec "$spec")
		else
			read -r pw pc _ < <("$python" bench/listing_loop.py "$data" --spec "$spec")
			read -r fw fu fs < <({ TIMEFORMAT='%R %U %S'; time "$bin" classify --jsonl "$data" >/dev/null; } 2>&1)
		fi
		fc=$(echo "$fu + $fs" | bc -l)
		fg+=("$fw")
		py+=("$pw")
		fgcpu+=("$fc")
		pycpu+=("$pc")
		printf 'round %d: flakegate %.3fs (cpu %.3fs)  python %.3fs (cpu %.3fs)  ratio %.1fx (cpu %.1fx)  load %s\n' \
			"$i" "$fw" "$fc" "$pw" "$pc" "$(echo "$pw / $fw" | bc -l)" "$(echo "$pc / $fc" | bc -l)" \
			"$(cut -d' ' -f1-3 /proc/loadavg)"
	done

	python3 - "${fg[*]}" "${py[*]}" "${fgcpu[*]}" "${pycpu[*]}" "$records" "$corpus" <<'PY'
import statistics, sys
fg, py, fgc, pyc = ([float(x) for x in a.split()] for a in sys.argv[1:5])
n, corpus = int(sys.argv[5]), sys.argv[6]
mf, mp = statistics.median(fg), statistics.median(py)
mfc, mpc = statistics.median(fgc), statistics.median(pyc)
ratios = sorted(p / f for f, p in zip(fg, py))
cpu = sorted(p / f for f, p in zip(fgc, pyc))
print(f"{corpus} median: flakegate {mf:.3f}s wall, {mfc:.3f}s cpu ({n / mf:,.0f} records/s);"
      f" python {mp:.3f}s wall, {mpc:.3f}s cpu ({n / mp:,.0f} records/s)")
print(f"{corpus} median ratio python/flakegate: {statistics.median(ratios):.1f}x wall"
      f" (rounds {ratios[0]:.1f}x-{ratios[-1]:.1f}x, target 10x);"
      f" {statistics.median(cpu):.1f}x CPU time (rounds {cpu[0]:.1f}x-{cpu[-1]:.1f}x, target 4x)")
PY
done
echo "load: $(uptime)"
