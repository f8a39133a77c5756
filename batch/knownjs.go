// The known answers of a jest or vitest batch (known.go): a new test
// file beside a member's file.

package batch

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/flakegate/flakegate/attempt"
	"github.com/flakegate/flakegate/evidence"
)

// plantJS plants a test file of two tests beside a member's test file,
// named as its neighbours are (the same .test. or .spec. suffix and
// extension). The passing test leaves its nonce in the report: vitest
// in the task's meta, jest as its count of passing assertions; the
// failing one throws its nonce. A framework too old to write meta or
// the count writes it for no test, and then the outcome alone decides
// (JSReport.Carries).
func plantJS(p KnownPlan, d *drawer) (*KnownSet, error) {
	k := &KnownSet{framework: p.Framework}
	words := p.words()
	m := p.Members[d.r.IntN(len(p.Members))]
	dir, base := path.Split(m.Pkg)
	dir = strings.TrimSuffix(dir, "/")
	suffix := path.Ext(base)
	for _, mark := range []string{".test.", ".spec."} {
		if i := strings.Index(base, mark); i > 0 {
			suffix = base[i:]
		}
	}
	stem := strings.TrimSuffix(base, suffix)
	join := func(a, b string) string {
		switch {
		case strings.Contains(stem, "-"):
			return a + "-" + b
		case strings.Contains(stem, "_"):
			return a + "_" + b
		}
		return a + title(b)
	}
	file := freeName(func(f string) bool { return fileExists(filepath.Join(p.Dir, filepath.FromSlash(path.Join(dir, f)))) }, func() string {
		return join(d.pick(words), d.pick(words)) + suffix
	})
	phrase := func() string { return d.pick(words) + " " + d.pick(words) + " " + d.pick(words) }
	titles := []string{phrase()}
	titles = append(titles, freeName(func(s string) bool { return s == titles[0] }, phrase))
	if file == "" {
		return nil, fmt.Errorf("no free name for a known answer beside %s", m.Pkg)
	}
	fail := d.nonce()
	var pass, src string
	if p.Framework == evidence.FrameworkVitest {
		pass = d.nonce()
		key := d.pick(words)
		src = "import { test } from 'vitest'\n\n" + jsTests(d,
			fmt.Sprintf("test(%q, ({ task }) => {\n  task.meta[%q] = %q\n})\n", titles[0], key, pass),
			fmt.Sprintf("test(%q, () => {\n  throw new Error(%q)\n})\n", titles[1], fail))
		pass = strconv.Quote(key) + ":" + strconv.Quote(pass) // as the meta's JSON holds it
	} else {
		n := 3 + d.r.IntN(60)
		pass = "asserts=" + strconv.Itoa(n) + ";"
		src = jestImport(filepath.Join(p.Dir, filepath.FromSlash(m.Pkg))) + jsTests(d,
			fmt.Sprintf("test(%q, () => {\n  for (let i = 0; i < %d; i++) expect(i).toBe(i)\n})\n", titles[0], n),
			fmt.Sprintf("test(%q, () => {\n  throw new Error(%q)\n})\n", titles[1], fail))
	}
	k.files = append(k.files, knownFile(dir, file, m.Pkg, src))
	rel := path.Join(dir, file)
	carries := func(rep Report) bool {
		jr, ok := rep.(jsReport)
		if !ok {
			return false
		}
		meta, asserts := jr.Carries()
		return p.Framework == evidence.FrameworkVitest && !meta || p.Framework == evidence.FrameworkJest && !asserts
	}
	for i, want := range []string{attempt.Pass, attempt.Fail} {
		a := knownAnswer{shape: &Shape{Framework: p.Framework, Test: titles[i], Pkg: rel},
			label: rel + "::" + titles[i], want: want, nonce: []string{pass, fail}[i]}
		if want == attempt.Pass {
			a.optional = carries
		}
		k.answers = append(k.answers, a)
	}
	return k, nil
}

// jsTests is two tests in an order drawn for the attempt.
func jsTests(d *drawer, a, b string) string {
	if d.r.IntN(2) == 1 {
		a, b = b, a
	}
	return a + "\n" + b
}

// jestImport is how a jest test file beside member gets test and
// expect: as the member does when it imports them from @jest/globals
// (a config may turn the globals off), else jest's globals.
func jestImport(member string) string {
	b, err := os.ReadFile(member)
	if err != nil || !strings.Contains(string(b), "@jest/globals") {
		return ""
	}
	if strings.Contains(string(b), "require(") {
		return "const { test, expect } = require('@jest/globals')\n\n"
	}
	return "import { test, expect } from '@jest/globals'\n\n"
}
