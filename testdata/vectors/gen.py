#!/usr/bin/env python3
"""Conformance vectors for flakegate's record reader, record hash and decision table.

The reference is the classifier listing printed in the spec
(flake-freeze-ledger.txt). Its code is not stored in this repository: this
script finds the listing in the spec at run time, executes it in a private
namespace, and runs every case through it.

Modes:
  gen.py [--spec PATH] [--out PATH]   write vectors.jsonl (default: next to this file)
  gen.py --check [--spec PATH]        exit 1 if vectors.jsonl differs from a fresh run
  gen.py --hash [--spec PATH]         read JSON records, one per stdin line; write the
                                      listing's record_sha256 per line, or "error: ..."
  gen.py --decide [--spec PATH]       the same, but write the listing's decision per line
                                      (with record_sha256), or {"error": "..."}

The spec path defaults to $FLAKEGATE_SPEC, else ../shared/spec/flake-freeze-ledger.txt
relative to the repository root.

Each vector line holds:
  name       unique case name
  input      the record bytes as a JSON string (input_base64 instead when the
             bytes are not valid UTF-8)
  listing    what the listing's command prints for those bytes (label, freeze,
             ..., record_sha256), or {"error": "..."} where it raises
  expect     flakegate's answer per DESIGN.md: label, freeze, record_sha256 (null
             where flakegate's reader refuses the bytes), and missing where the
             case is about absent keys
  deviation  present where expect differs from the listing, saying why
"""

from __future__ import annotations

import argparse
import ast
import base64
import contextlib
import io
import json
import math
import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
DEFAULT_SPEC = REPO.parent / "shared" / "spec" / "flake-freeze-ledger.txt"
DEFAULT_OUT = HERE / "vectors.jsonl"

LISTING_FIRST = "#!/usr/bin/env python3"
LISTING_LAST = "raise SystemExit(main(sys.argv))"


# ---------------------------------------------------------------- the listing


def spec_path(arg: str | None) -> Path:
    if arg:
        return Path(arg)
    env = os.environ.get("FLAKEGATE_SPEC")
    if env:
        return Path(env)
    return DEFAULT_SPEC


def extract_listing(spec_text: str) -> str:
    """Return the source of the spec's classifier listing."""
    lines = spec_text.splitlines()
    starts = [i for i, l in enumerate(lines) if l.strip() == LISTING_FIRST]
    if len(starts) != 1:
        raise SystemExit(f"gen.py: want one listing start {LISTING_FIRST!r} in the spec, found {len(starts)}")
    start = starts[0]
    for end in range(start, len(lines)):
        if lines[end].strip() == LISTING_LAST:
            return "\n".join(lines[start : end + 1]) + "\n"
    raise SystemExit(f"gen.py: listing end {LISTING_LAST!r} not found in the spec")


class Listing:
    """The spec's listing, executed in its own namespace."""

    def __init__(self, path: Path):
        text = path.read_text(encoding="utf-8")
        self.source = extract_listing(text)
        self.ns: dict = {"__name__": "flake_freeze_listing"}
        exec(compile(self.source, f"<listing in {path.name}>", "exec"), self.ns)
        for name in ("classify", "main", "_sha256", "_self_check", "REQUIRED", "LABELS"):
            if name not in self.ns:
                raise SystemExit(f"gen.py: the listing defines no {name}")
        self.required = tuple(self.ns["REQUIRED"])
        self.labels = tuple(self.ns["LABELS"])

    def run_file(self, raw: bytes) -> dict:
        """Run the listing's command on raw as its RUN.json; its stdout, parsed."""
        with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
            f.write(raw)
            name = f.name
        out = io.StringIO()
        try:
            with contextlib.redirect_stdout(out):
                self.ns["main"](["classify_failure.py", name])
        except (Exception, RecursionError) as e:  # the listing's traceback
            return {"error": f"{type(e).__name__}: {str(e)[:200]}"}
        finally:
            os.unlink(name)
        return json.loads(out.getvalue())

    def record_sha256(self, record) -> str:
        """The listing's hash of an already parsed record (the expression its main uses)."""
        raw = json.dumps(record, sort_keys=True, separators=(",", ":"))
        return self.ns["_sha256"](raw)

    def self_check_records(self) -> list[tuple[dict, str]]:
        """The records and labels asserted by the listing's _self_check, in order."""
        tree = ast.parse(self.source)
        fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "_self_check")
        env: dict = {}
        cases = []
        for stmt in fn.body:
            if isinstance(stmt, ast.Assign):
                exec(compile(ast.Module(body=[stmt], type_ignores=[]), "<self-check>", "exec"), dict(self.ns), env)
            elif isinstance(stmt, ast.Assert):
                # assert classify(RECORD)["label"] == "LABEL"
                cmp = stmt.test
                call = cmp.left.value
                record = eval(compile(ast.Expression(call.args[0]), "<self-check>", "eval"), dict(self.ns), env)
                cases.append((record, cmp.comparators[0].value))
        if len(cases) != 8:
            raise SystemExit(f"gen.py: want the listing's 8 self-check records, found {len(cases)}")
        return cases


# ---------------------------------------------------------------- cases


class Case:
    def __init__(self, name, raw, label, *, refuse=False, deviation=None, missing=None):
        self.name = name
        self.raw = raw if isinstance(raw, bytes) else raw.encode("utf-8")
        self.label = label
        self.refuse = refuse  # flakegate's reader refuses the bytes: no record_sha256
        self.deviation = deviation
        self.missing = missing


class _Drop:
    def __repr__(self):
        return "DROP"


DROP = _Drop()  # rec(key=DROP) leaves the key out


def dumps(record, **kw) -> bytes:
    return json.dumps(record, ensure_ascii=False, **kw).encode("utf-8")


def with_extra(record: dict, key_literal: str, value_literal: str) -> bytes:
    """record's JSON with one more member appended as literal text."""
    head = json.dumps(record, ensure_ascii=False)
    return (head[:-1] + f", {key_literal}: {value_literal}}}").encode("utf-8")


def build_cases(lst: Listing) -> list[Case]:
    checks = lst.self_check_records()
    base = checks[0][0]
    prop = base["property_path"]
    req = lst.required

    def rec(**kw):
        r = dict(base)
        for k, v in kw.items():
            if v is DROP:
                r.pop(k, None)
            else:
                r[k] = v
        return r

    cases: list[Case] = []

    def add(name, raw, label, **kw):
        if isinstance(raw, dict) or isinstance(raw, list):
            raw = dumps(raw)
        cases.append(Case(name, raw, label, **kw))

    # The listing's own examples and the spec's worked records.
    for i, (record, label) in enumerate(checks, 1):
        add(f"selfcheck/{i}-{label.lower()}", record, label)
    add("worked/digest-mismatch", rec(fixture_sha256="abc", base_fixture_sha256="def"), "FIXTURE")
    add("worked/red-on-both-sides", rec(base_seed_result="fail"), "PROPERTY")
    add("worked/scheduler", rec(retry_results=["pass"], retry_cap=2), "SCHEDULER")
    add("worked/base-not-run-retry-passed", rec(base_seed_result="not_run"), "INCOMPLETE")

    # Row 1: required keys, transcript flag.
    for key in req:
        add(f"row1/missing-{key}", rec(**{key: DROP}), "INCOMPLETE", missing=[key])
    add("row1/missing-two-in-table-order", rec(retry_cap=DROP, run_id=DROP), "INCOMPLETE", missing=["run_id", "retry_cap"])
    add("row1/empty-object", {}, "INCOMPLETE", missing=list(req))
    add("row1/transcript-null", rec(transcript_complete=None), "INCOMPLETE")
    add("row1/transcript-zero", rec(transcript_complete=0), "INCOMPLETE")
    add("row1/transcript-string", rec(transcript_complete="yes"), "INCOMPLETE", deviation="transcript_complete must be a boolean; the listing takes any truthy value")
    add("row1/transcript-one", rec(transcript_complete=1), "INCOMPLETE", deviation="transcript_complete must be a boolean; the listing takes any truthy value")
    add("row1/transcript-false-beats-contaminated", rec(transcript_complete=False, diff_paths=[prop]), "INCOMPLETE")
    add("row1/required-null-property-sha256", rec(property_sha256=None), "INCOMPLETE", deviation="a required key set to null is a wrong type")
    add("row1/property-sha256-empty", rec(property_sha256=""), "INCOMPLETE", deviation="digests are non-empty strings")
    add("row1/fixture-digests-null", rec(fixture_sha256=None, base_fixture_sha256=None), "INCOMPLETE", deviation="digests are non-empty strings; the listing finds null == null")
    add("row1/fixture-digests-empty", rec(fixture_sha256="", base_fixture_sha256=""), "INCOMPLETE", deviation="digests are non-empty strings")
    add("row1/fixture-digests-int", rec(fixture_sha256=7, base_fixture_sha256=7), "INCOMPLETE", deviation="digests are strings")

    # Seeds.
    add("seed/string", rec(seed="nightly-3.a:b_c"), "SCHEDULER")
    add("seed/negative", rec(seed=-7), "SCHEDULER")
    add("seed/zero", rec(seed=0), "SCHEDULER")
    add("seed/minus-zero-literal", with_extra(rec(seed=DROP), '"seed"', "-0"), "SCHEDULER")
    add("seed/30-digits", rec(seed=int("9" * 30)), "SCHEDULER")
    add("seed/300-digits", rec(seed=int("1" + "0" * 299)), "SCHEDULER")
    add("seed/float", with_extra(rec(seed=DROP), '"seed"', "1402.0"), "INCOMPLETE", deviation="seed must be an integer or a string, not a float")
    add("seed/exponent", with_extra(rec(seed=DROP), '"seed"', "1e3"), "INCOMPLETE", deviation="seed must be an integer or a string, not a float")
    add("seed/true", rec(seed=True), "INCOMPLETE", deviation="seed must be an integer or a string")
    add("seed/null", rec(seed=None), "INCOMPLETE", deviation="a required key set to null is a wrong type")
    add("seed/object", rec(seed={"n": 1}), "INCOMPLETE", deviation="seed must be an integer or a string")
    add("seed/empty-string", rec(seed=""), "INCOMPLETE", deviation="a seed string is non-empty")
    add("seed/string-with-space", rec(seed="a b"), "INCOMPLETE", deviation="a seed string is [A-Za-z0-9._:-]")
    add("seed/string-non-ascii", rec(seed="sé"), "INCOMPLETE", deviation="a seed string is [A-Za-z0-9._:-]")

    # Row 2: contamination, path cleaning, bad paths.
    gen = "tools/gen_retry_fixture.py"
    add("row2/property-in-diff", rec(diff_paths=["src/retry.py", prop]), "CONTAMINATED")
    add("row2/generator-in-diff", rec(fixture_generator_path=gen, diff_paths=[gen]), "CONTAMINATED")
    add("row2/both-in-diff", rec(fixture_generator_path=gen, diff_paths=[prop, gen]), "CONTAMINATED")
    add("row2/beats-fixture", rec(diff_paths=[prop], fixture_sha256="e" * 64), "CONTAMINATED")
    add("row2/beats-budget", rec(diff_paths=[prop], budget_ok=False), "CONTAMINATED")
    add("row2/beats-base-not-run", rec(diff_paths=[prop], base_seed_result="not_run"), "CONTAMINATED")
    add("row2/generator-null-is-absent", rec(fixture_generator_path=None), "SCHEDULER")
    add("row2/generator-outside-diff", rec(fixture_generator_path=gen), "SCHEDULER")
    add("row2/diff-empty", rec(diff_paths=[]), "SCHEDULER")
    add("row2/non-ascii-path", rec(property_path="tests/props/tést_中.py", diff_paths=["tests/props/tést_中.py"]), "CONTAMINATED")
    add("row2/diff-dot-slash", rec(diff_paths=["./" + prop]), "CONTAMINATED", deviation="paths are cleaned before comparison: ./a is a")
    add("row2/diff-double-slash", rec(diff_paths=[prop.replace("/", "//", 1)]), "CONTAMINATED", deviation="paths are cleaned before comparison: a//b is a/b")
    add("row2/diff-inner-dotdot", rec(diff_paths=["tests/x/../props/" + prop.rsplit("/", 1)[1]]), "CONTAMINATED", deviation="paths are cleaned before comparison: a/x/../b is a/b")
    add("row2/property-path-dot-slash", rec(property_path="./" + prop, diff_paths=[prop]), "CONTAMINATED", deviation="paths are cleaned before comparison")
    add("row2/generator-double-slash", rec(fixture_generator_path="tools//gen_retry_fixture.py", diff_paths=[gen]), "CONTAMINATED", deviation="paths are cleaned before comparison")
    add("row2/similar-path-not-contaminated", rec(diff_paths=[prop + "c", "x/" + prop]), "SCHEDULER")
    add("row2/watch-exact", rec(watch_paths=["src/retry.py"]), "CONTAMINATED", deviation="watch_paths entries in diff_paths contaminate; the listing ignores watch_paths")
    add("row2/watch-folder-prefix", rec(watch_paths=["src/"]), "CONTAMINATED", deviation="a watch_paths entry ending in / is a folder prefix")
    add("row2/watch-folder-sibling", rec(watch_paths=["sr/"], diff_paths=["src/retry.py", "srcx/a.py"]), "SCHEDULER")
    add("row2/watch-no-slash-is-not-prefix", rec(watch_paths=["src"]), "SCHEDULER")
    add("row2/watch-null-is-absent", rec(watch_paths=None), "SCHEDULER")
    add("row2/watch-empty", rec(watch_paths=[]), "SCHEDULER")
    add("row2/watch-not-array", rec(watch_paths="src/"), "INCOMPLETE", deviation="watch_paths must be an array of strings")
    add("row2/diff-absolute", rec(diff_paths=["/etc/passwd"]), "INCOMPLETE", deviation="an absolute path is a bad path")
    add("row2/diff-climbs-out", rec(diff_paths=["../outside.py"]), "INCOMPLETE", deviation="a path climbing out with .. is a bad path")
    add("row2/diff-climbs-out-after-clean", rec(diff_paths=["a/../../outside.py"]), "INCOMPLETE", deviation="a path climbing out with .. is a bad path")
    add("row2/property-path-absolute", rec(property_path="/" + prop), "INCOMPLETE", deviation="an absolute path is a bad path")
    add("row2/generator-climbs-out", rec(fixture_generator_path="../gen.py"), "INCOMPLETE", deviation="a path climbing out with .. is a bad path")
    add("row2/watch-absolute", rec(watch_paths=["/src/"]), "INCOMPLETE", deviation="an absolute path is a bad path")
    add("row2/property-path-empty", rec(property_path=""), "INCOMPLETE", deviation="an empty path is a bad path; the listing drops it")
    add("row2/diff-empty-string", rec(diff_paths=["src/retry.py", ""]), "INCOMPLETE", deviation="an empty path is a bad path")
    add("row2/property-path-int", rec(property_path=5), "INCOMPLETE", deviation="property_path must be a string")
    add("row2/diff-element-int", rec(diff_paths=["src/retry.py", 1]), "INCOMPLETE", deviation="diff_paths must be an array of strings")
    add("row2/diff-element-array", rec(diff_paths=[["src/retry.py"]]), "INCOMPLETE")
    add("row2/diff-not-array", rec(diff_paths=prop), "INCOMPLETE")

    # Row 2, the graded tree (docs/suites.md): a test whose base version
    # failed where the patch edited it lists the edits in diff_paths and
    # grader_edits (and, for its data, in watch_paths).
    golden = "tests/props/data/golden.json"
    add("grader/test-file-edited", rec(diff_paths=["src/retry.py", prop], grader_edits=[prop], retry_results=[]), "CONTAMINATED")
    add("grader/test-file-edited-retry-passed", rec(diff_paths=["src/retry.py", prop], grader_edits=[prop]), "CONTAMINATED")
    add("grader/data-edited", rec(diff_paths=["src/retry.py", golden], watch_paths=[golden], grader_edits=[golden]), "CONTAMINATED",
        deviation="watch_paths entries in diff_paths contaminate; the listing ignores watch_paths (a test whose data the patch edited: grader_edits)")
    add("grader/base-test-of-edited-file-passed", rec(candidate_result="pass", retry_results=[]), "PASS")

    # Row 3: fixture digests.
    add("row3/digest-case-differs", rec(fixture_sha256="ABC", base_fixture_sha256="abc"), "FIXTURE")
    add("row3/beats-budget", rec(fixture_sha256="e" * 64, budget_ok=False), "FIXTURE")
    add("row3/beats-base-not-run", rec(fixture_sha256="e" * 64, base_seed_result="not_run"), "FIXTURE")
    add("row3/beats-candidate-pass", rec(fixture_sha256="e" * 64, candidate_result="pass"), "FIXTURE")

    # Row 4: budget.
    add("row4/beats-base-not-run", rec(budget_ok=False, base_seed_result="not_run"), "BUDGET")
    add("row4/beats-candidate-pass", rec(budget_ok=False, candidate_result="pass"), "BUDGET")
    add("row4/budget-string-false", rec(budget_ok="false"), "INCOMPLETE", deviation="budget_ok must be a boolean; the listing reads the string as true")
    add("row4/budget-zero", rec(budget_ok=0), "INCOMPLETE", deviation="budget_ok must be a boolean")
    add("row4/budget-null", rec(budget_ok=None), "INCOMPLETE", deviation="a required key set to null is a wrong type")

    # Row 5: base seed result.
    add("row5/base-null", rec(base_seed_result=None), "INCOMPLETE")
    add("row5/base-uppercase", rec(base_seed_result="PASS"), "INCOMPLETE")
    add("row5/base-empty", rec(base_seed_result=""), "INCOMPLETE")
    add("row5/beats-candidate-pass", rec(base_seed_result="not_run", candidate_result="pass"), "INCOMPLETE")

    # Row 6: candidate passed.
    add("row6/base-failed", rec(candidate_result="pass", base_seed_result="fail"), "PASS")
    add("row6/no-retries", rec(candidate_result="pass", retry_results=[], retry_cap=0), "PASS")
    add("row6/envs-differ", rec(candidate_result="pass", candidate_env={"workers": 1, "clock_budget_s": 60, "filesystem": "ext4"}, base_env={"workers": 4, "clock_budget_s": 60, "filesystem": "ext4"}), "PASS")
    add("row6/one-env", rec(candidate_result="pass", candidate_env={"workers": 1, "clock_budget_s": 60, "filesystem": "ext4"}), "PASS")
    add("row6/candidate-uppercase", rec(candidate_result="PASS"), "INCOMPLETE", deviation="candidate_result must be pass or fail; the listing counts PASS as a failure")
    add("row6/candidate-error", rec(candidate_result="error"), "INCOMPLETE", deviation="candidate_result must be pass or fail")
    add("row6/candidate-null", rec(candidate_result=None), "INCOMPLETE", deviation="a required key set to null is a wrong type")

    # Rows 7 and 8: environments.
    env = {"workers": 2, "clock_budget_s": 60, "filesystem": "ext4"}
    add("row7/candidate-env-only", rec(candidate_env=env), "INCOMPLETE", deviation="row 7: only one of candidate_env/base_env")
    add("row7/base-env-only", rec(base_env=env), "INCOMPLETE", deviation="row 7: only one of candidate_env/base_env")
    add("row7/base-env-null", rec(candidate_env=env, base_env=None), "INCOMPLETE", deviation="row 7: a null env counts as absent")
    add("row7/one-env-property", rec(candidate_env=env, base_seed_result="fail"), "PROPERTY")
    add("row7/env-not-object", rec(candidate_env="ext4", base_env="ext4"), "INCOMPLETE", deviation="an env must be an object")
    add("row8/envs-equal", rec(candidate_env=env, base_env=dict(env)), "SCHEDULER")
    add("row8/envs-null", rec(candidate_env=None, base_env=None), "SCHEDULER")
    add("row8/envs-equal-other-key-differs", rec(candidate_env=dict(env, host="a"), base_env=dict(env, host="b")), "SCHEDULER")
    add("row8/workers-differ", rec(candidate_env=env, base_env=dict(env, workers=4)), "BUDGET", deviation="row 8: envs differ in workers")
    add("row8/clock-differs", rec(candidate_env=env, base_env=dict(env, clock_budget_s=90)), "BUDGET", deviation="row 8: envs differ in clock budget")
    add("row8/filesystem-differs", rec(candidate_env=env, base_env=dict(env, filesystem="tmpfs")), "BUDGET", deviation="row 8: envs differ in filesystem")
    add("row8/envs-differ-property", rec(candidate_env=env, base_env=dict(env, workers=4), base_seed_result="fail"), "PROPERTY")

    # Rows 9 and 10: retries and the cap.
    add("row9/cap-zero", rec(retry_results=["pass"], retry_cap=0), "PROPERTY")
    add("row9/pass-beyond-cap", rec(retry_results=["fail", "pass"], retry_cap=1), "PROPERTY")
    add("row9/pass-at-cap", rec(retry_results=["fail", "pass"], retry_cap=2), "SCHEDULER")
    add("row9/pass-after-cap", rec(retry_results=["fail", "fail", "pass"], retry_cap=2), "PROPERTY")
    add("row9/cap-beyond-retries", rec(retry_results=["pass"], retry_cap=5), "SCHEDULER")
    add("row9/no-retries", rec(retry_results=[], retry_cap=2), "PROPERTY")
    add("row9/all-retries-fail", rec(retry_results=["fail", "fail"], retry_cap=2), "PROPERTY")
    add("row9/cap-30-digits", rec(retry_cap=int("9" * 30)), "SCHEDULER")
    add("row9/base-fail-retry-pass", rec(base_seed_result="fail", retry_results=["pass", "pass"]), "PROPERTY")
    add("row9/cap-negative-slices-from-end", rec(retry_results=["pass", "fail"], retry_cap=-1), "INCOMPLETE", deviation="retry_cap must be >= 0; the listing slices [:-1]")
    add("row9/cap-negative", rec(retry_results=["pass"], retry_cap=-1), "INCOMPLETE", deviation="retry_cap must be >= 0")
    add("row9/cap-float-integral", with_extra(rec(retry_cap=DROP), '"retry_cap"', "2.0"), "INCOMPLETE", deviation="retry_cap must be an integer, not a float")
    add("row9/cap-float", rec(retry_cap=2.5), "INCOMPLETE", deviation="retry_cap must be an integer, not a float")
    add("row9/cap-string", rec(retry_cap="2"), "INCOMPLETE", deviation="retry_cap must be an integer, not a string")
    add("row9/cap-true", rec(retry_cap=True), "INCOMPLETE", deviation="retry_cap must be an integer, not a bool")
    add("row9/cap-null", rec(retry_cap=None), "INCOMPLETE")
    add("row9/cap-word", rec(retry_cap="two"), "INCOMPLETE")
    add("row9/retry-timeout-then-pass", rec(retry_results=["timeout", "pass"]), "INCOMPLETE", deviation="every retry result must be pass or fail")
    add("row9/retry-int", rec(retry_results=[1, "pass"]), "INCOMPLETE", deviation="retry_results must be an array of strings")
    add("row9/retry-uppercase", rec(retry_results=["PASS"]), "INCOMPLETE", deviation="every retry result must be pass or fail")
    add("row9/retries-not-array", rec(retry_results="pass"), "INCOMPLETE")

    # Unknown keys are kept and hashed; they never change the label.
    add("unknown/nested", rec(x_meta={"b": [1, {"z": None, "a": True}], "a": {"y": [], "x": {}}}), "SCHEDULER")
    add("unknown/deep-50", dumps(rec())[:-1] + b', "x_deep": ' + b'{"k": [' * 50 + b"0" + b"]}" * 50 + b"}", "SCHEDULER")
    add("unknown/scalars", rec(x_null=None, x_true=True, x_false=False, x_empty_obj={}, x_empty_arr=[], x_str=""), "SCHEDULER")
    add("unknown/flakegate-provenance", rec(schema="flakegate.run/v1", base_sha="a" * 40, candidate_sha="b" * 40, fixture_path="tests/fixtures/retry",
                                             wall_budget_s=60.5, samples=200, attempts=[{"side": "candidate", "index": 0, "result": "fail", "wall_seconds": 1.25}],
                                             transcript_path="out/t.jsonl", transcript_sha256="c" * 64, base_from_replay_cache=False, tool_version="0.1.0"), "SCHEDULER")
    add("unknown/on-property", rec(base_seed_result="fail", x_note="é"), "PROPERTY")

    # Key order and whitespace never change the hash.
    add("layout/keys-reversed", dict(reversed(list(rec(x={"b": 1, "a": [{"d": 1, "c": 2}]}).items()))), "SCHEDULER")
    add("layout/indented", dumps(rec(x={"b": 1, "a": [1, 2]}), indent=2), "SCHEDULER")
    add("layout/tabs-crlf", dumps(rec(x=[1, {"a": 2}]), indent="\t").replace(b"\n", b"\r\n"), "SCHEDULER")
    add("layout/spaces-everywhere", b"  " + dumps(rec(x=[1]), separators=(" , ", " : ")) + b" \n\n", "SCHEDULER")
    add("layout/keys-sorted-by-code-point", rec(**{"é": 1, "z": 2, "Z": 3, "😀": 4, "\uffff": 5, "": 6, "ａ": 7, "ab": 8, "a": 9}), "SCHEDULER")

    # Numbers: the hash writes integers exactly and floats as Python's repr.
    floats = ["1.0", "1e-05", "1e+16", "1e16", "1E2", "-0.0", "0e0", "-0", "5e-324", "1.7976931348623157e+308",
              "9007199254740993.0", "0.1", "1e22", "123456789012345678.0", "-1.5e-7", "1e15", "0.0001", "0.00001",
              "1e-400", "-1e-400", "2.4703282292062328e-324", "1.5E+300", "10.50", "100"]
    for lit in floats:
        add(f"number/{lit}", with_extra(rec(), '"x_num"', lit), "SCHEDULER")
    add("number/int-30-digits", with_extra(rec(), '"x_num"', "-" + "123456789" * 3 + "012"), "SCHEDULER")
    add("number/int-300-digits", with_extra(rec(), '"x_num"', "7" * 300), "SCHEDULER")
    add("number/underflow-huge-exponent", with_extra(rec(), '"x_num"', "1e-999999"), "SCHEDULER")
    add("number/long-mantissa", with_extra(rec(), '"x_num"', "1" + "0" * 400 + ".0e-400"), "SCHEDULER")
    # Python reads integers of at most 4300 digits; the listing raises beyond.
    add("number/int-4300-digits", with_extra(rec(), '"x_num"', "7" * 4300), "SCHEDULER")
    add("number/int-4301-digits", with_extra(rec(), '"x_num"', "7" * 4301), "INCOMPLETE", refuse=True)
    add("number/int-minus-4300-digits", with_extra(rec(), '"x_num"', "-" + "7" * 4300), "SCHEDULER")
    add("number/int-minus-4301-digits", with_extra(rec(), '"x_num"', "-" + "7" * 4301), "INCOMPLETE", refuse=True)
    add("seed/4301-digits", with_extra(rec(seed=DROP), '"seed"', "1" * 4301), "INCOMPLETE", refuse=True)
    add("number/floats-in-array", with_extra(rec(), '"x_nums"', "[0.5, -2.5e-10, 3e300, 1.0e0]"), "SCHEDULER")
    for lit in ["1e999", "-1e400", "1.8e308"]:
        add(f"number/overflow-{lit}", with_extra(rec(), '"x_num"', lit), "INCOMPLETE", refuse=True, deviation="a number too large for a float64; the listing hashes it as Infinity")
    for lit in ["NaN", "Infinity", "-Infinity"]:
        add(f"number/{lit}", with_extra(rec(), '"x_num"', lit), "INCOMPLETE", refuse=True, deviation="NaN and Infinity are not JSON")
    add("number/nan-seed", with_extra(rec(seed=DROP), '"seed"', "NaN"), "INCOMPLETE", refuse=True, deviation="NaN is not JSON; the listing freezes seed NaN")

    # Strings: escapes in, the listing's escapes out.
    strings = {
        "e-acute": "é", "cjk": "中", "emoji": "😀", "u2028": "a\u2028b", "uffff": "\uffff", "nul": "\u0000",
        "u001f": "\u001f", "del": "\u007f", "short-escapes": "\b\f\n\r\t\"\\", "slash": "a/b",
    }
    for name, s in strings.items():
        add(f"string/{name}-raw", rec(x_str=s, **{"k" + s: s}), "SCHEDULER")
        add(f"string/{name}-escaped", json.dumps(rec(x_str=s, **{"k" + s: s}), ensure_ascii=True), "SCHEDULER")
    add("string/escaped-slashes", dumps(rec(x_url="https://example.test/a/b")).replace(b"/", b"\\/"), "SCHEDULER")
    add("string/uppercase-escapes", with_extra(rec(), '"x_str"', '"\\u00E9\\uD83D\\uDE00\\u001F"'), "SCHEDULER")
    add("string/escaped-key-names", dumps(rec(run_id=DROP))[:-1] + b', "\\u0072un_id": "r1"}', "SCHEDULER")
    add("string/lone-high-surrogate", with_extra(rec(), '"x_str"', '"\\ud800"'), "INCOMPLETE", refuse=True, deviation="a lone surrogate escape is not a character")
    add("string/lone-low-surrogate", with_extra(rec(), '"x_str"', '"a\\udc00b"'), "INCOMPLETE", refuse=True, deviation="a lone surrogate escape is not a character")
    add("string/swapped-surrogates", with_extra(rec(), '"x_str"', '"\\ude00\\ud83d"'), "INCOMPLETE", refuse=True, deviation="a lone surrogate escape is not a character")
    add("string/raw-control-char", with_extra(rec(), '"x_str"', '"a\x01b"'), "INCOMPLETE", refuse=True)
    add("string/raw-tab", with_extra(rec(), '"x_str"', '"a\tb"'), "INCOMPLETE", refuse=True)
    add("string/bad-escape", with_extra(rec(), '"x_str"', '"\\x41"'), "INCOMPLETE", refuse=True)

    add("string/bom-inside", rec(x_str="\ufeffa"), "SCHEDULER")
    for name, lit in [("minus-alone", "-"), ("trailing-dot", "1."), ("leading-dot", ".5"), ("plus", "+1"),
                      ("leading-zero", "01"), ("empty-exponent", "1e"), ("hex", "0x10"), ("minus-space", "- 1")]:
        add(f"number/syntax-{name}", with_extra(rec(), '"x_num"', lit), "INCOMPLETE", refuse=True)

    # Many members: past any small-object fast path in sorting and duplicate checks.
    many = {f"x_{i:02d}": i for i in range(40, 0, -1)}
    add("unknown/40-keys-reversed", rec(x_many=many, **many), "SCHEDULER")
    add("bytes/duplicate-key-after-30-members", dumps(rec(**many))[:-1] + b', "x_07": 7}', "INCOMPLETE", refuse=True, deviation="a duplicate key; the listing keeps the last")
    add("bytes/duplicate-key-nested-after-30", with_extra(rec(), '"x_many"', json.dumps(many)[:-1] + ', "x_40": 0}'), "INCOMPLETE", refuse=True, deviation="a duplicate key in a nested object")

    # Bytes that are not exactly one JSON object.
    good = dumps(rec())
    add("bytes/invalid-utf8", good[:-1] + b', "x": "\xff"}', "INCOMPLETE", refuse=True)
    add("bytes/overlong-utf8", good[:-1] + b', "x": "\xc0\xaf"}', "INCOMPLETE", refuse=True)
    add("bytes/utf8-encoded-surrogate", good[:-1] + b', "x": "\xed\xa0\x80"}', "INCOMPLETE", refuse=True)
    add("bytes/bom", b"\xef\xbb\xbf" + good, "INCOMPLETE", refuse=True)
    add("bytes/empty", b"", "INCOMPLETE", refuse=True)
    add("bytes/whitespace-only", b" \n\t ", "INCOMPLETE", refuse=True)
    add("bytes/truncated", good[: len(good) // 2], "INCOMPLETE", refuse=True)
    add("bytes/trailing-object", good + b" {}", "INCOMPLETE", refuse=True)
    add("bytes/trailing-garbage", good + b"x", "INCOMPLETE", refuse=True)
    add("bytes/trailing-comma", good[:-1] + b",}", "INCOMPLETE", refuse=True)
    add("bytes/single-quotes", good.replace(b'"', b"'"), "INCOMPLETE", refuse=True)
    add("bytes/comment", b"// record\n" + good, "INCOMPLETE", refuse=True)
    add("bytes/duplicate-key", good[:-1] + b', "seed": 1403}', "INCOMPLETE", refuse=True, deviation="a duplicate key; the listing keeps the last")
    add("bytes/duplicate-key-by-escape", good[:-1] + b', "s\\u0065ed": 1403}', "INCOMPLETE", refuse=True, deviation="a duplicate key once escapes are read")
    add("bytes/duplicate-key-nested", good[:-1] + b', "x": {"a": 1, "a": 2}}', "INCOMPLETE", refuse=True, deviation="a duplicate key in a nested object")
    add("bytes/duplicate-key-same-value", good[:-1] + b', "run_id": "r1"}', "INCOMPLETE", refuse=True, deviation="a duplicate key, even with the same value")
    # JSON that is not an object: INCOMPLETE, but still JSON, so still hashed.
    add("bytes/array", b"[" + good + b"]", "INCOMPLETE")
    add("bytes/empty-array", b"[]", "INCOMPLETE")
    add("bytes/string-holding-key-names", json.dumps(" ".join(req)), "INCOMPLETE")
    add("bytes/number", b"1402", "INCOMPLETE")
    add("bytes/null", b"null", "INCOMPLETE")
    add("bytes/true", b"true", "INCOMPLETE")
    # Nesting: flakegate reads up to 256 levels (the record itself is one).
    add("bytes/depth-256", good[:-1] + b', "x": ' + b"[" * 255 + b"]" * 255 + b"}", "SCHEDULER")
    add("bytes/depth-257", good[:-1] + b', "x": ' + b"[" * 256 + b"]" * 256 + b"}", "INCOMPLETE", refuse=True, deviation="nesting deeper than flakegate's limit of 256")
    add("bytes/deep-nesting-10000", b'{"x": ' + b"[" * 10000 + b"]" * 10000 + b"}", "INCOMPLETE", refuse=True)
    return cases


# ---------------------------------------------------------------- vectors


def finite(v):
    """v with non-finite floats written as strings, so the vector file is strict JSON."""
    if isinstance(v, float) and not math.isfinite(v):
        return repr(v)
    if isinstance(v, dict):
        return {k: finite(x) for k, x in v.items()}
    if isinstance(v, list):
        return [finite(x) for x in v]
    return v


def vector(lst: Listing, c: Case) -> dict:
    listing = lst.run_file(c.raw)
    expect_sha = None
    if not c.refuse:
        expect_sha = lst.record_sha256(json.loads(c.raw.decode("utf-8")))
    expect = {"label": c.label, "freeze": c.label == "SCHEDULER", "record_sha256": expect_sha}
    if c.missing is not None:
        expect["missing"] = c.missing

    problems = []
    if "error" in listing:
        if c.deviation:
            problems.append("deviation given, but the listing raises")
        if not c.refuse and c.label != "INCOMPLETE":
            problems.append("the listing raises on a record flakegate accepts")
    else:
        if listing["label"] not in lst.labels:
            problems.append(f"unknown listing label {listing['label']}")
        same = listing["label"] == c.label and listing["record_sha256"] == expect_sha
        if same and c.deviation:
            problems.append("deviation given, but expect equals the listing")
        if not same and not c.deviation:
            problems.append(f"expect {c.label}/{expect_sha} differs from listing {listing['label']}/{listing['record_sha256']} without a deviation")
        if not c.refuse and listing["record_sha256"] != expect_sha:
            problems.append("hash differs from the listing's on accepted bytes")
        if c.missing is not None and listing.get("missing") != c.missing:
            problems.append(f"missing {c.missing} differs from the listing's {listing.get('missing')}")
    # The invariant: never a PASS or freeze the listing would not give.
    if c.label == "PASS" and listing.get("label") != "PASS":
        problems.append("expect PASS where the listing does not")
    if expect["freeze"] and listing.get("freeze") is not True:
        problems.append("expect freeze where the listing does not")
    if problems:
        raise SystemExit(f"gen.py: case {c.name}: " + "; ".join(problems))

    v = {"name": c.name}
    try:
        v["input"] = c.raw.decode("utf-8")
    except UnicodeDecodeError:
        v["input_base64"] = base64.b64encode(c.raw).decode("ascii")
    v["listing"] = finite(listing)
    v["expect"] = expect
    if c.deviation:
        v["deviation"] = c.deviation
    return v


def render(lst: Listing) -> str:
    cases = build_cases(lst)
    names = [c.name for c in cases]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise SystemExit(f"gen.py: duplicate case names {sorted(dup)}")
    lines = [json.dumps(vector(lst, c), ensure_ascii=True, allow_nan=False) for c in cases]
    return "\n".join(lines) + "\n"


def hash_mode(lst: Listing) -> int:
    out = sys.stdout
    for line in sys.stdin.buffer:
        line = line.rstrip(b"\n")
        try:
            record = json.loads(line.decode("utf-8"))
            out.write(lst.record_sha256(record) + "\n")
        except (Exception, RecursionError) as e:
            out.write(f"error: {type(e).__name__}: {str(e)[:200]}\n".replace("\n", " ").rstrip() + "\n")
    out.flush()
    return 0


def decide_mode(lst: Listing) -> int:
    """Per stdin line: the listing's decision for the record, with its record_sha256."""
    out = sys.stdout
    for line in sys.stdin.buffer:
        line = line.rstrip(b"\n")
        try:
            record = json.loads(line.decode("utf-8"))
            decision = lst.ns["classify"](record)
            decision["record_sha256"] = lst.record_sha256(record)
        except (Exception, RecursionError) as e:
            decision = {"error": f"{type(e).__name__}: {str(e)[:200]}"}
        out.write(json.dumps(finite(decision), allow_nan=False) + "\n")
    out.flush()
    return 0


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--spec", help="path of flake-freeze-ledger.txt")
    ap.add_argument("--out", default=str(DEFAULT_OUT), help="vectors file to write")
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="compare a fresh run with --out")
    mode.add_argument("--hash", action="store_true", help="hash stdin records, one per line")
    mode.add_argument("--decide", action="store_true", help="classify and hash stdin records, one per line")
    args = ap.parse_args(argv[1:])
    path = spec_path(args.spec)
    if not path.is_file():
        print(f"gen.py: spec not found: {path} (pass --spec or set FLAKEGATE_SPEC)", file=sys.stderr)
        return 2
    lst = Listing(path)
    if args.hash:
        return hash_mode(lst)
    if args.decide:
        return decide_mode(lst)
    text = render(lst)
    out = Path(args.out)
    if args.check:
        if not out.is_file() or out.read_text(encoding="ascii") != text:
            print(f"gen.py: {out} is stale; rerun testdata/vectors/gen.py", file=sys.stderr)
            return 1
        print(f"gen.py: {out} is up to date ({text.count(chr(10))} vectors)")
        return 0
    out.write_text(text, encoding="ascii")
    print(f"gen.py: wrote {text.count(chr(10))} vectors to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
