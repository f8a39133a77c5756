// The known answers of a pytest batch (known.go): a new test module
// beside a member's file.

package batch

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/flakegate/flakegate/attempt"
	"github.com/flakegate/flakegate/evidence"
	"github.com/flakegate/flakegate/suites"
)

// plantPytest plants a module of two tests beside a member's test file:
// the passing one records its nonce as a JUnit property, the failing
// one asserts with its nonce. Their node ids go where the seed's order
// (suites.Rank) puts them among the members.
func plantPytest(p KnownPlan, d *drawer) (*KnownSet, error) {
	k := &KnownSet{framework: evidence.FrameworkPytest}
	words := p.words()
	m := p.Members[d.r.IntN(len(p.Members))]
	memberFile, memberName, _ := strings.Cut(m.Test, "::")
	dir, base := path.Split(memberFile)
	dir = strings.TrimSuffix(dir, "/")
	file := freeName(func(f string) bool { return fileExists(filepath.Join(p.Dir, filepath.FromSlash(path.Join(dir, f)))) }, func() string {
		w := d.pick(words) + "_" + d.pick(words)
		if strings.HasSuffix(base, "_test.py") && !strings.HasPrefix(base, "test_") {
			return w + "_test.py"
		}
		return "test_" + w + ".py"
	})
	prefix := "test_"
	if f, _, _ := strings.Cut(memberName, "::"); !strings.HasPrefix(f, "test") && strings.Contains(f, "_") {
		prefix = f[:strings.Index(f, "_")+1] // the project's python_functions
	}
	var names []string
	for len(names) < 2 {
		n := freeName(func(s string) bool { return strings.Contains(strings.Join(names, " "), s) }, func() string {
			return prefix + d.pick(words) + "_" + d.pick(words)
		})
		names = append(names, n)
	}
	if file == "" || names[0] == names[1] {
		return nil, fmt.Errorf("no free name for a known answer beside %s", memberFile)
	}
	pass, fail := d.nonce(), d.nonce()
	key := d.pick(words)
	bodies := []string{
		fmt.Sprintf("def %s(record_property):\n    record_property(%q, %q)\n", names[0], key, pass),
		fmt.Sprintf("def %s():\n    assert %s == %s, %q\n", names[1], fail, pass, fail),
	}
	if d.r.IntN(2) == 1 {
		bodies[0], bodies[1] = bodies[1], bodies[0]
	}
	k.files = append(k.files, knownFile(dir, file, memberFile, bodies[0]+"\n\n"+bodies[1]))
	rel := path.Join(dir, file)
	for i, want := range []string{attempt.Pass, attempt.Fail} {
		node := rel + "::" + names[i]
		k.answers = append(k.answers, knownAnswer{shape: &Shape{Framework: evidence.FrameworkPytest, Test: node},
			label: node, want: want, nonce: []string{pass, fail}[i]})
		at := len(p.Members)
		for j, mm := range p.Members {
			if suites.Rank(p.Seed, node) < suites.Rank(p.Seed, mm.Test) {
				at = j
				break
			}
		}
		k.at = append(k.at, at)
	}
	return k, nil
}
