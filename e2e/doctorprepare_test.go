package e2e_test

import (
	"strconv"
	"strings"
	"testing"
)

// preparedToolFiles: the property's program, bin/tool, is made only by
// the prepare (script); it runs the property file, which reads src/val.
func preparedToolFiles(script string) map[string]string {
	return map[string]string{
		"flakegate.yaml": "version: 1\nretry_cap: 1\nprepare:\n  run: [sh, -c, " + strconv.Quote(script) + "]\n  budget: 30s\n" +
			"properties:\n  - {path: props/p.sh, seeds: [1, 2], run: [bin/tool, \"{path}\", \"{seed}\"], wall_budget: 10s}\n",
		"props/p.sh": "[ \"$(cat src/val)\" = ok ]\n",
		"src/val":    "ok\n",
		"README.md":  "a program only the prepare makes\n",
	}
}

const makeTool = `mkdir -p bin && printf '#!/bin/sh\nexec sh "$1"\n' > bin/tool && chmod +x bin/tool`

// TestDoctorThenCheckPreparedProgram: doctor runs the base's prepare in
// the check's sandbox and finds the program it makes (ok, exit 0); the
// check then runs it as written (a harmless patch PASS on every seed, a
// regression PROPERTY), reusing the layer doctor kept. A prepare that
// does not make it, or fails, is a doctor fail (exit 1) naming it.
func TestDoctorThenCheckPreparedProgram(t *testing.T) {
	t.Parallel()
	needRootOverlay(t)
	r := newRepo(t, preparedToolFiles(makeTool))
	code, out := r.run("doctor")
	if code != 0 || !strings.Contains(out, "ok   prepare: prepare ran on the base (") ||
		!strings.Contains(out, "ok   run: properties[0].run: bin/tool is made by the prepare (in the prepared tree, in the sandbox)") {
		t.Fatalf("doctor: exit %d, want 0 and the program found in the prepared tree\n%s", code, out)
	}
	r.candidate("docs", map[string]string{"README.md": "documented\n"})
	docs := r.check("--base", "base", "--candidate", "docs")
	wantAll(t, docs, 0, "PASS", 2)
	if !strings.Contains(docs.stderr, "prepare base: ") || !strings.Contains(docs.stderr, "(cached: yes)") {
		t.Errorf("the check did not reuse the layer doctor kept:\n%s", docs.stderr)
	}
	r.candidate("bug", map[string]string{"src/val": "broken\n"})
	wantAll(t, r.check("--base", "base", "--candidate", "bug"), 1, "PROPERTY", 2)

	for _, tc := range []struct{ name, script, want string }{
		{"not made", "mkdir -p bin && echo made nothing",
			"fail run: properties[0].run: bin/tool is neither in the base tree nor made by the prepare (it ran, and the prepared tree has no bin/tool)"},
		{"not executable", "mkdir -p bin && echo 'exit 0' > bin/tool",
			"fail run: properties[0].run: the prepare made bin/tool, but it is not an executable file"},
		{"prepare fails", "echo cannot reach the package index >&2; exit 3",
			"prepare failed: exit 3: cannot reach the package index: every triple of its properties would be INCOMPLETE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRepo(t, preparedToolFiles(tc.script))
			code, out := r.run("doctor")
			if code != 1 || !strings.Contains(out, tc.want) {
				t.Fatalf("doctor: exit %d, want 1 and %q\n%s", code, tc.want, out)
			}
		})
	}
}
