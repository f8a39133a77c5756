// Known answers: every batch carries tests of flakegate's own, drawn for
// each attempt, added to the attempt's own tree (sandbox.TreeFile, never
// the worktree or the repository) and selected with the members. One must
// pass and show its nonce, one must fail and show its nonce. A report
// that does not show exactly that (the framework's own structured report,
// as for a member) is no report of the framework's: the test process
// wrote its own, and every member of the batch is an error (INCOMPLETE),
// never a pass. The known answers are not triples: they never appear as
// results; what each did goes into the members' transcripts.
//
// Per framework (knowngo.go, knownpy.go, knownjs.go):
//
//   - go: two fuzz targets in a new test file of each package of the
//     batch (its external test package, or the package itself for a
//     main package). Fuzz targets run after the tests, which -shuffle
//     permutes, so the planted ones change no test's order: the order a
//     seed gives is the one go test -shuffle gives without them. The
//     passing one logs its nonce and calls F.Fuzz; the failing one fails
//     with its nonce. Each package's events must end "fail", the batch
//     must exit non-zero, and, where flakegate knows the package's list
//     (a suite), the tests must have run in the order the seed gives.
//   - pytest: a new test module beside a member's file; the passing test
//     records its nonce as a JUnit property (record_property), the
//     failing one asserts with it. Their node ids go on the command line
//     where the seed's order puts them.
//   - jest, vitest: a new test file beside a member's file; the passing
//     test leaves its nonce in the report (vitest: the task's meta; jest:
//     its count of passing assertions), the failing one throws it.
//
// The names are drawn from the members' own names and common words, so
// that nothing about them tells them apart from the project's tests.

package batch

import (
	cryptorand "crypto/rand"
	"fmt"
	mathrand "math/rand/v2"
	"path"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/attempt"
	"github.com/flakegate/flakegate/attempt/sandbox"
	"github.com/flakegate/flakegate/evidence"
	"github.com/flakegate/flakegate/transcript"
)

// knownAnswer is one planted test.
type knownAnswer struct {
	shape *Shape // how it joins the batch's command
	label string // path::name
	want  string // attempt.Pass or attempt.Fail
	nonce string // what its report must show: its output or evidence holds it
	scope string // go: the package argument it vouches for; "" for the one process
	// optional: the framework's report may carry no evidence of a body
	// (an older vitest or jest); evidence then decides nothing.
	optional func(rep Report) bool
}

// KnownSet is the known answers of one attempt of a batch.
type KnownSet struct {
	framework string
	answers   []knownAnswer
	files     []sandbox.TreeFile
	// at is, for pytest, where each answer's node id goes among the
	// members (the index it is inserted before); others go last.
	at []int
	// more checks, after the attempt, what else the framework's report
	// must show (go: each package ends "fail", and the tests ran
	// in the order the seed gives where the list is known), by scope;
	// nil: nothing more.
	more func(rep Report) map[string]string
}

// KnownPlan is what planting needs to know of a batch.
type KnownPlan struct {
	Framework string
	Dir       string   // the attempt's tree on the host
	Members   []*Shape // in the batch's order
	Seed      flakegate.Seed
	// GoList is a Go package's test list as go test -list prints it
	// (suites), nil when not known.
	GoList func(pkg string) []string
	// Draws, with Tree (the tree's key: its side and revision), makes
	// a go package's known answers one draw per check, tree and
	// package (knowndraws.go); nil or "": a draw per attempt.
	Draws *KnownDraws
	Tree  string
}

// drawer draws names and nonces for one attempt: from the system's
// randomness, never from anything the tree or a seed decides.
type drawer struct{ r *mathrand.Rand }

func newDrawer() *drawer {
	var seed [32]byte
	cryptorand.Read(seed[:]) //nolint:errcheck // never fails (Go 1.24)
	return &drawer{mathrand.New(mathrand.NewChaCha8(seed))}
}

func (d *drawer) nonce() string { return strconv.FormatInt(1<<62+d.r.Int64N(1<<62), 10) } // 19 digits, an int of Go

func (d *drawer) pick(words []string) string { return words[d.r.IntN(len(words))] }

// knownWords are common words of test names, mixed with the members' own.
var knownWords = strings.Fields(`value cache parse order limit config buffer retry index range merge match token
queue state event error group entry field format option path reader writer stream client server record table count
batch chunk scope window frame signal timer lock pool node graph tree list key hash sort split join trim encode decode
header body route handler request response session store load save flush close open read write empty nested unicode
large small zero negative default custom invalid missing duplicate timeout overflow boundary round trip escape quote
prefix suffix offset width height label name number string bytes slice copy reset update delete insert lookup filter`)

// words is the pool names are drawn from: the common words and the
// words of the members' names (camel case or snake case split).
func (p *KnownPlan) words() []string {
	pool := append([]string(nil), knownWords...)
	for _, m := range p.Members {
		name := m.Test
		if i := strings.LastIndex(name, "::"); i >= 0 {
			name = name[i+2:]
		}
		pool = addNameWords(pool, name)
	}
	return pool
}

// addNameWords adds the words of a test name to pool: lower case, of 3
// to 12 letters, not test, fuzz or example, each once.
func addNameWords(pool []string, name string) []string {
	for _, w := range splitWords(name) {
		w = strings.ToLower(w)
		if len(w) >= 3 && len(w) <= 12 && w != "test" && w != "fuzz" && w != "example" && !slices.Contains(pool, w) {
			pool = append(pool, w)
		}
	}
	return pool
}

// splitWords splits a test name into its words: at underscores, spaces,
// dashes and lower-to-upper case steps; only letters are kept.
func splitWords(s string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, string(cur))
			cur = nil
		}
	}
	prevLower := false
	for _, r := range s {
		switch {
		case !unicode.IsLetter(r) || r > unicode.MaxASCII:
			flush()
			prevLower = false
			continue
		case unicode.IsUpper(r) && prevLower:
			flush()
		}
		cur = append(cur, r)
		prevLower = unicode.IsLower(r)
	}
	flush()
	return out
}

func title(w string) string {
	if w == "" {
		return w
	}
	return strings.ToUpper(w[:1]) + w[1:]
}

// plantKnown draws the known answers of one attempt of a batch.
func plantKnown(p KnownPlan) (*KnownSet, error) {
	d := newDrawer()
	switch p.Framework {
	case evidence.FrameworkGo:
		return plantGo(p, d) // knowngo.go
	case evidence.FrameworkPytest:
		return plantPytest(p, d) // knownpy.go
	case evidence.FrameworkJest, evidence.FrameworkVitest:
		return plantJS(p, d) // knownjs.go
	}
	return nil, nil
}

// shapes is the batch's members with the known answers among them:
// each before the member its position names, the rest after the last.
func (k *KnownSet) shapes(members []*Shape) []*Shape {
	if k == nil {
		return members
	}
	var out []*Shape
	for i := 0; i <= len(members); i++ {
		for n, a := range k.answers {
			at := len(members)
			if n < len(k.at) {
				at = min(k.at[n], len(members))
			}
			if at == i {
				out = append(out, a.shape)
			}
		}
		if i < len(members) {
			out = append(out, members[i])
		}
	}
	return out
}

// KnownVerdict is what an attempt's report says of its known answers.
type KnownVerdict struct {
	Entries []transcript.KnownAnswer
	// Wrong says, by scope, why the report is not the framework's ("":
	// every member of that scope may be judged).
	Wrong map[string]string
}

// Judge reads the known answers from the attempt's report.
func (k *KnownSet) Judge(rep Report, out attempt.Outcome) KnownVerdict {
	v := KnownVerdict{Wrong: map[string]string{}}
	if k == nil {
		return v
	}
	add := func(scope, why string) {
		switch w := v.Wrong[scope]; {
		case w == "":
			v.Wrong[scope] = why
		case !strings.Contains(w, why):
			v.Wrong[scope] = w + "; " + why
		}
	}
	for _, a := range k.answers {
		tr := rep.Of(a.shape)
		e := transcript.KnownAnswer{Test: a.label, Want: a.want, Nonce: a.nonce, Result: tr.Result}
		e.Shown = strings.Contains(tr.Output, a.nonce) || strings.Contains(tr.Evidence, a.nonce)
		switch {
		case tr.Result != a.want:
			got := tr.Result
			if got == "" {
				got = "absent"
			}
			e.Why = fmt.Sprintf("planted to %s, the report says %s", a.want, got)
			if tr.Reason != "" {
				e.Why += " (" + tr.Reason + ")"
			}
		case !e.Shown && (a.optional == nil || !a.optional(rep)):
			e.Why = "the report does not show its nonce " + a.nonce + " as its body's"
		}
		if e.Why != "" {
			add(a.scope, "known answer "+a.label+": "+e.Why)
		}
		v.Entries = append(v.Entries, e)
	}
	if out.ExitCode == 0 {
		// Every framework exits non-zero when a test fails, and one
		// always fails here.
		for _, a := range k.answers {
			add(a.scope, "the batch exited 0, but its known answer "+k.failing()+" fails")
		}
	}
	if k.more != nil {
		for scope, why := range k.more(rep) {
			add(scope, why)
		}
	}
	return v
}

// failing is the label of the answer planted to fail.
func (k *KnownSet) failing() string {
	for _, a := range k.answers {
		if a.want == attempt.Fail {
			return a.label
		}
	}
	return ""
}

// KnownReason is the reason of a member whose batch's report is not
// the framework's.
func KnownReason(why string) string {
	return "the test process wrote its own report: " + why
}

// freeName draws names until one is not taken; "" after many tries.
func freeName(taken func(string) bool, draw func() string) string {
	for range 200 {
		if n := draw(); !taken(n) {
			return n
		}
	}
	return ""
}

// knownFile is the tree file of a known answer in folder dir.
func knownFile(dir, name, like string, data string) sandbox.TreeFile {
	rel := path.Join(dir, name)
	return sandbox.TreeFile{Rel: rel, Data: []byte(data), Like: like}
}

// addTo adds the known answers' files to cmd's attempt: to its sandbox
// (the attempt's own tree), or, without one, to the worktree, whence
// the returned function removes them (the tree is reset after every
// attempt there too).
func (k *KnownSet) addTo(cmd *attempt.Command) (func(), error) {
	if k == nil || len(k.files) == 0 {
		return func() {}, nil
	}
	if sb, _ := cmd.Sandbox.(*sandbox.Sandbox); sb != nil {
		sb.TreeFiles = k.files
		return func() {}, nil
	}
	undo, err := sandbox.WriteTreeFiles(cmd.Dir, k.files)
	if err != nil {
		return nil, &flakegate.Error{Code: flakegate.EINTERNAL, Op: "check", Path: cmd.Dir, Message: "cannot add a batch's known answers to its tree", Err: err}
	}
	return undo, nil
}

// KnownScope is the scope of a member's known answers: its package for
// go (each package is a process of its own), "" for the one process of
// the others.
func KnownScope(s *Shape) string {
	if s.Framework == evidence.FrameworkGo {
		return s.Pkg
	}
	return ""
}

// ArmKnown plants the known answers of one attempt of a batch (plan's
// members, led by lead's shape), makes cmd's argv the batch's command
// with them among the members, and adds their files to its tree. It
// returns the set and what removes the files again; an error says why
// they could not be planted (the attempt then runs nothing).
func ArmKnown(cmd *attempt.Command, plan KnownPlan, lead *Shape) (*KnownSet, func(), error) {
	k, err := plantKnown(plan)
	if err != nil {
		return nil, nil, fmt.Errorf("cannot plant the batch's known answers: %w", err)
	}
	cmd.Argv = Argv(lead, k.shapes(plan.Members))
	undo, err := k.addTo(cmd)
	if err != nil {
		return nil, nil, err
	}
	return k, undo, nil
}

// Planted reports whether test, as a batch's output stream names it
// (go: "pkg.Name"; pytest: the node id), is one of the known answers.
func (k *KnownSet) Planted(test string) bool {
	if k == nil {
		return false
	}
	for _, a := range k.answers {
		if test == a.label || test == a.shape.Test || strings.HasSuffix(test, "."+a.shape.Test) {
			return true
		}
	}
	return false
}
