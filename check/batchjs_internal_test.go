package check

import (
	"strings"
	"testing"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/batch"
	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/evidence"
)

// TestJSShapeNameWithEquals: a test name that holds "=" (vitest's
// "should decode 'id=770&#anchor'", found on fb55/entities) batches with
// the whole pattern as the -t value, in both of the flag's forms. Before,
// the value was cut at the name's own "=" and the batch's pattern put
// after it: no test matched, and each one was INCOMPLETE.
func TestJSShapeNameWithEquals(t *testing.T) {
	for _, run := range [][]string{
		{"node", "node_modules/vitest/vitest.mjs", "run", "{path}", "-t", "^{name}$"},
		{"node", "node_modules/vitest/vitest.mjs", "run", "{path}", "-t=^{name}$"},
	} {
		mk := func(name string) *job {
			p := &config.Property{Path: "a.test.js", Name: name, Run: run, Batch: true}
			return &job{ps: &propState{prop: p, framework: evidence.FrameworkVitest}, seed: flakegate.Seed("7")}
		}
		a, b := shapeOf(mk("decodes 'id=770&#x'")), shapeOf(mk("plain"))
		if a == nil || b == nil || a.Key != b.Key {
			t.Fatalf("%q: shapes %+v and %+v; want one key", run, a, b)
		}
		got := strings.Join(batch.Argv(a, []*batch.Shape{a, b}), " ")
		if !strings.Contains(got, `^(decodes(?: > | )'id=770&#x'|plain)$`) || strings.Contains(got, `id=^(`) {
			t.Errorf("%q: batch argv %s", run, got)
		}
	}
}

// TestJSShape: which jest and vitest run templates batch, and the
// command of a batch of two members of two files.
func TestJSShape(t *testing.T) {
	jest := []string{"env", "FAST_CHECK_SEED={seed}", "npx", "jest", "--ci", "{path}", "-t", "^{name}$"}
	for _, tc := range []struct {
		name, fw string
		run      []string
		want     string // "" when it runs alone
	}{
		{"jest", evidence.FrameworkJest, jest,
			`env FAST_CHECK_SEED=7 npx jest --ci a.test.js b.test.js -t ^(sort orders|a\.b\(c\))$ --json`},
		{"jest --json and the name first", evidence.FrameworkJest, []string{"jest", "--json", "--testNamePattern={name}", "{path}"},
			`jest --testNamePattern=^(sort orders|a\.b\(c\))$ a.test.js b.test.js --json`},
		{"vitest", evidence.FrameworkVitest, []string{"npx", "vitest", "run", "{path}", "-t", "{name}", "--seed={seed}"},
			`npx vitest run a.test.js b.test.js -t ^(sort(?: > | )orders|a\.b\(c\))$ --seed=7 --reporter=json`},
		{"init's vitest", evidence.FrameworkVitest, []string{"env", "FAST_CHECK_SEED={seed}", "node_modules/.bin/vitest", "run", "{path}", "-t", "^{name}$"},
			`env FAST_CHECK_SEED=7 node_modules/.bin/vitest run a.test.js b.test.js -t ^(sort(?: > | )orders|a\.b\(c\))$ --reporter=json`},
		{"init's jest", evidence.FrameworkJest, []string{"env", "FAST_CHECK_SEED={seed}", "node_modules/.bin/jest", "--ci", "{path}", "-t", "^{name}$"},
			`env FAST_CHECK_SEED=7 node_modules/.bin/jest --ci a.test.js b.test.js -t ^(sort orders|a\.b\(c\))$ --json`},
		{"a reporter of its own", evidence.FrameworkVitest, []string{"vitest", "run", "{path}", "-t", "{name}", "--reporter=verbose"}, ""},
		{"an output file", evidence.FrameworkJest, append(append([]string{}, jest...), "--outputFile=x.json"), ""},
		{"bail", evidence.FrameworkJest, append(append([]string{}, jest...), "--bail"), ""},
		{"watch", evidence.FrameworkVitest, []string{"vitest", "{path}", "-t", "{name}", "--watch"}, ""},
		{"no name selection", evidence.FrameworkJest, []string{"jest", "{path}"}, ""},
		{"the name in a pattern", evidence.FrameworkJest, []string{"jest", "{path}", "-t", "{name} works"}, ""},
		{"the name twice", evidence.FrameworkJest, []string{"jest", "{path}", "-t", "{name}", "--x={name}"}, ""},
		{"the path in a shell", evidence.FrameworkJest, []string{"sh", "-c", "jest {path} -t {name}"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mk := func(path, name string) *job {
				p := &config.Property{Path: path, Name: name, Run: tc.run, Batch: true}
				return &job{ps: &propState{prop: p, framework: tc.fw}, seed: flakegate.Seed("7")}
			}
			a, b := shapeOf(mk("a.test.js", "sort orders")), shapeOf(mk("b.test.js", "a.b(c)"))
			if tc.want == "" {
				if a != nil {
					t.Fatalf("batches as %+v; want alone", a)
				}
				return
			}
			if a == nil || b == nil || a.Key != b.Key {
				t.Fatalf("shapes %+v and %+v; want one key", a, b)
			}
			if got := strings.Join(batch.Argv(a, []*batch.Shape{a, b, a}), " "); got != tc.want {
				t.Errorf("batch argv\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}
