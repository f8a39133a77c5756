#!/usr/bin/env python3
"""The spec's listing as an in-process loop over a JSON-lines file: the peer
that bench/classify.sh measures flakegate against.

The listing is extracted from the spec at run time (as testdata/vectors/gen.py
does; its code is not stored here). Per line: json.loads, the listing's
classify, the listing's record hash (json.dumps sort_keys, compact separators,
sha256), then the decision as JSON, written to OUT (default /dev/null).
Prints the loop's wall seconds, its CPU seconds and the record count;
interpreter start-up and spec reading are excluded.

Usage: listing_loop.py RECORDS.jsonl [--spec PATH] [--out PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.dont_write_bytecode = True  # no __pycache__ in testdata/
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "testdata" / "vectors"))
import gen  # noqa: E402


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description="time the listing over a JSON-lines file")
    ap.add_argument("records")
    ap.add_argument("--spec")
    ap.add_argument("--out", default=os.devnull)
    args = ap.parse_args(argv[1:])
    lst = gen.Listing(gen.spec_path(args.spec))
    classify, sha256 = lst.ns["classify"], lst.ns["_sha256"]
    loads, dumps = json.loads, json.dumps
    n = 0
    start, cpu = time.perf_counter(), time.process_time()
    with open(args.records, "rb") as f, open(args.out, "w", encoding="utf-8") as out:
        for line in f:
            try:
                record = loads(line)
                decision = classify(record)
                decision["record_sha256"] = sha256(dumps(record, sort_keys=True, separators=(",", ":")))
            except Exception as e:  # the listing's traceback, as a decision
                decision = {"label": "INCOMPLETE", "freeze": False, "error": str(e)}
            out.write(dumps(decision) + "\n")
            n += 1
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    print(f"{elapsed:.6f} {cpu:.6f} {n}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
