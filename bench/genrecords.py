#!/usr/bin/env python3
"""Write N realistic run records, one per line, for bench/classify.sh.

Records look like the ones `flakegate check` writes (schema flakegate.run/v1
with provenance keys and attempt wall times), with labels spread over the
whole decision table, some unknown keys, floats and non-ASCII text. The
output is the same for the same N and seed.

With --small the records are about 600 bytes: the required keys, the two
envs and a few provenance keys, and about a quarter of them carry a wrong
type that the listing refuses too (diff_paths or retry_results not a list,
transcript_complete 0 or null, base_seed_result a number or null), so both
sides label them INCOMPLETE.

With --python-spaced the records are the small ones written as a Python
producer writes them by default: json.dumps's own separators (", " and
": "), a seed above 2**53 in most records (up to 30 digits), a big
integer counter, and extra keys whose value is null (fixture_generator_path,
watch_paths, candidate_env and base_env null in some, x_* keys in all).

Usage: genrecords.py OUT [--count N] [--seed S] [--small | --python-spaced]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys

PROPS = ["tests/props/test_retry_budget.py", "tests/props/test_ledger_order.py", "tests/props/test_cache_evict.py",
         "tests/props/test_parse_unicode.py", "tests/props/test_scheduler_fair.py", "tests/props/test_zone_tz.py"]
SRC = ["src/retry.py", "src/ledger/core.py", "src/cache/lru.py", "src/parse/lexer.py", "docs/README.md",
       "src/sched/queue.py", "src/tz/zones.py", "pyproject.toml", "src/api/handlers.py", "tests/unit/test_lru.py"]
NOTES = ["café au lait", "中文注释", "naïve résumé ✓", "emoji 😀 in the tail", "plain ascii tail", "Ünïcödé — dash", "日本語のログ"]


def hexdigest(rnd: random.Random, n: int) -> str:
    return "%0*x" % (n, rnd.getrandbits(4 * n))


def record(rnd: random.Random, i: int) -> dict:
    prop = rnd.choice(PROPS)
    fixture = hexdigest(rnd, 64)
    diff = rnd.sample(SRC, rnd.randint(1, 5))
    roll = rnd.random()
    candidate, base, retries, budget, transcript, base_fixture = "fail", "pass", ["fail", "pass"], True, True, fixture
    if roll < 0.30:  # SCHEDULER
        pass
    elif roll < 0.50:  # PROPERTY
        base = "fail"
    elif roll < 0.70:  # PASS
        candidate, retries = "pass", []
    elif roll < 0.78:  # CONTAMINATED
        diff.append(prop)
    elif roll < 0.85:  # FIXTURE
        base_fixture = hexdigest(rnd, 64)
    elif roll < 0.92:  # BUDGET
        budget = False
    elif roll < 0.96:  # INCOMPLETE: no replay
        base = "not_run"
    else:  # INCOMPLETE: transcript cut
        transcript = False
    seed = rnd.randint(1, 100000) if rnd.random() < 0.9 else "nightly-%d" % rnd.randint(1, 99)
    env = {"workers": rnd.choice([1, 2, 4]), "clock_budget_s": 60, "filesystem": "ext4"}
    attempts = []
    for k, res in enumerate([candidate] + retries):
        attempts.append({"side": "candidate", "index": k, "result": res, "exit_code": 0 if res == "pass" else 1,
                         "started_at": "2026-11-%02dT%02d:%02d:%02dZ" % (rnd.randint(1, 30), rnd.randint(0, 23), rnd.randint(0, 59), rnd.randint(0, 59)),
                         "wall_seconds": rnd.uniform(0.5, 59.0)})
    rec = {
        "schema": "flakegate.run/v1",
        "run_id": "run-%08d" % i,
        "seed": seed,
        "property_path": prop,
        "property_sha256": hexdigest(rnd, 64),
        "fixture_sha256": fixture,
        "base_fixture_sha256": base_fixture,
        "diff_paths": diff,
        "candidate_result": candidate,
        "base_seed_result": base,
        "retry_results": retries,
        "retry_cap": 2,
        "budget_ok": budget,
        "transcript_complete": transcript,
        "candidate_env": env,
        "base_env": dict(env),
        "base_sha": hexdigest(rnd, 40),
        "candidate_sha": hexdigest(rnd, 40),
        "fixture_path": "tests/fixtures/" + prop.rsplit("/", 1)[1][5:-3],
        "wall_budget_s": 60.0,
        "samples": 200,
        "attempts": attempts,
        "transcript_path": ".git/flakegate/transcripts/run-%08d.jsonl" % i,
        "transcript_sha256": hexdigest(rnd, 64),
        "base_from_replay_cache": rnd.random() < 0.5,
        "tool_version": "0.1.0",
    }
    if rnd.random() < 0.3:
        rec["fixture_generator_path"] = "tools/gen_fixture.py"
    if rnd.random() < 0.25:
        rec["x_ci"] = {"job": "failure-class", "runner": {"os": "linux", "labels": ["x64", "self-hosted"]}, "load": [rnd.random(), 1e-05, 1e+16]}
    if rnd.random() < 0.3:
        attempts[-1]["output_tail"] = rnd.choice(NOTES) + "\n" + "E   assert %d == %d" % (rnd.randint(0, 9), rnd.randint(0, 9))
    return rec


def small_record(rnd: random.Random, i: int) -> dict:
    """A record of about 600 bytes; see the module docstring."""
    prop = rnd.choice(PROPS)
    fixture = hexdigest(rnd, 64)
    diff = rnd.sample(SRC, rnd.randint(1, 2))
    roll = rnd.random()
    candidate, base, retries, budget, transcript, base_fixture = "fail", "pass", ["fail", "pass"], True, True, fixture
    if roll < 0.22:  # SCHEDULER
        pass
    elif roll < 0.36:  # PROPERTY
        base = "fail"
    elif roll < 0.50:  # PASS
        candidate, retries = "pass", []
    elif roll < 0.56:  # CONTAMINATED
        diff.append(prop)
    elif roll < 0.62:  # FIXTURE
        base_fixture = hexdigest(rnd, 64)
    elif roll < 0.68:  # BUDGET
        budget = False
    elif roll < 0.72:  # INCOMPLETE: no replay
        base = "not_run"
    seed = rnd.randint(1, 100000) if rnd.random() < 0.9 else "nightly-%d" % rnd.randint(1, 99)
    env = {"workers": rnd.choice([1, 2, 4]), "clock_budget_s": 60, "filesystem": "ext4"}
    rec = {
        "schema": "flakegate.run/v1",
        "run_id": "run-%08d" % i,
        "seed": seed,
        "property_path": prop,
        "property_sha256": hexdigest(rnd, 64),
        "fixture_sha256": fixture,
        "base_fixture_sha256": base_fixture,
        "diff_paths": diff,
        "candidate_result": candidate,
        "base_seed_result": base,
        "retry_results": retries,
        "retry_cap": 2,
        "budget_ok": budget,
        "transcript_complete": transcript,
    }
    if rnd.random() < 0.4:
        rec["candidate_env"], rec["base_env"] = env, dict(env)
    if roll >= 0.72:  # a wrong type, INCOMPLETE on both sides
        key, value = rnd.choice([
            ("diff_paths", "src/retry.py"), ("diff_paths", None), ("retry_results", "pass"),
            ("retry_results", 1), ("transcript_complete", 0), ("transcript_complete", None),
            ("base_seed_result", 1), ("base_seed_result", None),
        ])
        rec[key] = value
    if rnd.random() < 0.3:
        rec["fixture_generator_path"] = "tools/gen_fixture.py"
    if rnd.random() < 0.2:
        rec["note"] = rnd.choice(NOTES)
    return rec


def spaced_record(rnd: random.Random, i: int) -> dict:
    """A small record as a Python producer writes it; see the module docstring."""
    rec = small_record(rnd, i)
    roll = rnd.random()
    if roll < 0.6:
        rec["seed"] = rnd.randint(2**53 + 1, 2**64)
    elif roll < 0.8:
        rec["seed"] = rnd.randint(2**64, 10**30)
    rec["x_attempt_nonce"] = rnd.getrandbits(96)
    rec["x_retry_of"] = None
    rec["x_ci_job"] = None if rnd.random() < 0.7 else "job-%d" % rnd.randint(1, 999)
    for key in ("fixture_generator_path", "watch_paths"):
        if key not in rec and rnd.random() < 0.5:
            rec[key] = None
    if "candidate_env" not in rec and rnd.random() < 0.3:
        rec["candidate_env"], rec["base_env"] = None, None
    return rec


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description="write realistic run records, one per line")
    ap.add_argument("out")
    ap.add_argument("--count", type=int, default=200_000)
    ap.add_argument("--seed", type=int, default=1402)
    kind = ap.add_mutually_exclusive_group()
    kind.add_argument("--small", action="store_true", help="records of about 600 bytes, many wrong types")
    kind.add_argument("--python-spaced", action="store_true",
                      help="small records with json.dumps's default spacing, big integers and null extras")
    args = ap.parse_args(argv[1:])
    rnd = random.Random(args.seed)
    h = hashlib.sha256()
    with open(args.out, "wb") as f:
        for i in range(args.count):
            if args.python_spaced:
                rec, separators = spaced_record(rnd, i), (", ", ": ")  # json.dumps's default
            else:
                rec, separators = (small_record(rnd, i) if args.small else record(rnd, i)), (",", ":")
            # Half written the way Go's encoder writes (UTF-8 kept), half ASCII-escaped.
            line = json.dumps(rec, ensure_ascii=(i % 2 == 0), separators=separators).encode("utf-8") + b"\n"
            h.update(line)
            f.write(line)
    print(f"genrecords: {args.count} records, sha256 {h.hexdigest()[:16]}, {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
