package check

import (
	"strings"
	"testing"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/batch"
	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/suites"
)

// TestJSSuiteRun: a js suite's run template batches (jsShape), and the
// batch of two tests puts the seed's order flags before the files.
func TestJSSuiteRun(t *testing.T) {
	for fw, flags := range map[string]string{config.FrameworkVitest: "run --sequence.shuffle --sequence.seed=4", config.FrameworkJest: "--ci --randomize --seed=4"} {
		s := &config.Suite{Framework: fw, Path: "."}
		var jobs []job
		for _, st := range []suites.Test{{File: "a.test.js", Name: "g one"}, {File: "b.test.js", Name: "two (x)"}} {
			p := &config.Property{Path: st.File, Name: st.Name, Framework: fw, FrameworkSet: true, Batch: true, Suite: s, Run: suites.Property(&config.Config{}, s, st, &suites.List{}, "").Run}
			jobs = append(jobs, job{ps: &propState{prop: p, framework: fw}, seed: flakegate.Seed("4")})
		}
		a, b := shapeOf(&jobs[0]), shapeOf(&jobs[1])
		if a == nil || b == nil || a.Key != b.Key {
			t.Fatalf("%s: shapes %+v %+v", fw, a, b)
		}
		argv := strings.Join(batch.Argv(a, []*batch.Shape{a, b}), " ")
		names := `^(g one|two \(x\))$`
		if fw == config.FrameworkVitest { // a title may hold " > ", which the name lost
			names = `^(g(?: > | )one|two(?: > | )\(x\))$`
		}
		want := "node " + suites.JSRunner(fw) + " " + flags + ` a.test.js b.test.js -t ` + names
		if !strings.HasPrefix(argv, want) {
			t.Errorf("%s: %s\nwant %s...", fw, argv, want)
		}
	}
}
