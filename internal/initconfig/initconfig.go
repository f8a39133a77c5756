// Package initconfig turns the property tests discover found into a
// commented flakegate.yaml: per test its path and name, three fixed seeds
// and two drawn ones, the framework's run template, a wall budget and a
// prepare guess per ecosystem. The file is checked with config.Load
// before anyone writes it.
package initconfig

import (
	"fmt"
	"io/fs"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/internal/discover"
)

// Defaults of a generated file.
const (
	// DefaultWallBudget is every entry's budget without --measure.
	DefaultWallBudget = 5 * time.Minute
	// MeasureFloor is the smallest measured budget: a start-up that was
	// quick once may be slow on a loaded CI runner.
	MeasureFloor = 30 * time.Second
	// MeasureFactor multiplies one measured bare run.
	MeasureFactor = 5
	// RandomSeeds is each entry's random_seeds.
	RandomSeeds = 2
)

// Seeds are each entry's fixed seeds.
var Seeds = []int{1, 2, 3}

// Entry is one property of the generated file.
type Entry struct {
	Test discover.Test
	Run  []string
	// PassMarker is the regexp an exit 0 must print ("" for none: Go and
	// pytest have their own evidence).
	PassMarker string
	// WallBudget and how it was chosen ("default" or "measured: ...").
	WallBudget time.Duration
	BudgetNote string
	Prepare    *Prepare
}

// Prepare is an ecosystem's prepare guess.
type Prepare struct {
	Run     []string
	Network bool
	Budget  time.Duration
	// Why is the comment written above it.
	Why string
}

// Plan is what init writes.
type Plan struct {
	Entries []Entry
	// PrepareTop is the prepare shared by every entry (written at the top
	// level); nil when entries differ, then each carries its own.
	PrepareTop *Prepare
	// Skipped are tests a config cannot name (a name with a control
	// character, a leading '-', or too long; a path starting with '-').
	Skipped []discover.Skipped
}

// unnameable says why a config cannot hold t, "" when it can.
func unnameable(t discover.Test) string {
	if _, err := config.CleanRepoPath(t.Path); err != nil {
		return err.Error()
	}
	switch {
	case t.Name == "" || strings.TrimSpace(t.Name) != t.Name:
		return "its name is empty or starts or ends with a space"
	case strings.HasPrefix(t.Name, "-"):
		return "its name starts with '-'"
	case len(t.Name) > config.MaxNameLength:
		return fmt.Sprintf("its name is longer than %d bytes", config.MaxNameLength)
	case strings.ContainsFunc(t.Name, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return "its name holds a control character"
	}
	return ""
}

// Options are what Build needs to know of the machine.
type Options struct {
	// PytestOnPath is true when a pytest program is on PATH: pytest
	// tests then run [pytest, ...] (the documented recipe; the sandbox
	// sees the same PATH, tool managers' folders included), else
	// [python3, -m, pytest, ...].
	PytestOnPath bool
}

// Build makes a plan for the tests found in fsys (the repository root).
func Build(fsys fs.FS, tests []discover.Test, opts Options) *Plan {
	pl := &Plan{}
	for _, t := range tests {
		if why := unnameable(t); why != "" {
			pl.Skipped = append(pl.Skipped, discover.Skipped{Path: t.Path, Reason: "test " + strconv.Quote(t.Name) + ": " + why + "; add it by hand"})
			continue
		}
		e := Entry{Test: t, WallBudget: DefaultWallBudget, BudgetNote: "default; flakegate init --measure times one run"}
		switch t.Framework {
		case discover.GoRapid:
			pkg := "./" + t.Dir
			if t.Dir == "." {
				pkg = "."
			}
			e.Run = []string{"go", "test", "-count=1", "-run", "^{name}$", pkg, "-rapid.seed={seed}", "-rapid.nofailfile"}
		case discover.PytestHypothesis:
			pytest := []string{"python3", "-m", "pytest"}
			if opts.PytestOnPath {
				pytest = []string{"pytest"}
			}
			if p := pythonPrepare(fsys); p != nil {
				e.Prepare = p
				pytest = []string{".venv/bin/python", "-m", "pytest"}
			}
			e.Run = append(pytest, "-q", "-p", "no:cacheprovider", "{path}::{name}", "--hypothesis-seed={seed}")
		case discover.VitestFastCheck:
			e.Run = []string{"env", discover.SeedEnv + "={seed}", "node_modules/.bin/vitest", "run", "{path}", "-t", nameRegexp(t.Name)}
			e.PassMarker = `^\s*Tests\s.*\b1 passed\b`
			e.Prepare = nodePrepare(fsys)
		case discover.JestFastCheck:
			e.Run = []string{"env", discover.SeedEnv + "={seed}", "node_modules/.bin/jest", "--ci", "{path}", "-t", nameRegexp(t.Name)}
			e.PassMarker = `^Tests:\s.*\b1 passed\b`
			e.Prepare = nodePrepare(fsys)
		default:
			continue
		}
		pl.Entries = append(pl.Entries, e)
	}
	// One prepare for all when every entry has the same one.
	if len(pl.Entries) > 0 && pl.Entries[0].Prepare != nil {
		same := true
		for _, e := range pl.Entries[1:] {
			if e.Prepare == nil || strings.Join(e.Prepare.Run, "\x00") != strings.Join(pl.Entries[0].Prepare.Run, "\x00") {
				same = false
			}
		}
		if same {
			pl.PrepareTop = pl.Entries[0].Prepare
		}
	}
	return pl
}

// nameRegexp is the -t pattern that selects exactly the test named name:
// "^{name}$" when the name holds no regexp metacharacter, else the name
// quoted in place.
func nameRegexp(name string) string {
	if regexp.QuoteMeta(name) == name {
		return "^{name}$"
	}
	return "^" + regexp.QuoteMeta(name) + "$"
}

// pythonPrepare is `pip install -e .` into a virtual environment in the
// tree, when the repository is an installable package (setup.py, or a
// pyproject.toml with a [project] or [build-system] table).
func pythonPrepare(fsys fs.FS) *Prepare {
	installable := false
	if fi, err := fs.Stat(fsys, "setup.py"); err == nil && fi.Mode().IsRegular() {
		installable = true
	} else if b, err := fs.ReadFile(fsys, "pyproject.toml"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			l = strings.TrimSpace(l)
			if l == "[project]" || l == "[build-system]" {
				installable = true
			}
		}
	}
	if !installable {
		return nil
	}
	return &Prepare{
		Run:     []string{"sh", "-c", "python3 -m venv --system-site-packages .venv && .venv/bin/pip install -q -e ."},
		Network: true,
		Budget:  10 * time.Minute,
		Why: "a guess: the package is installed (pip install -e .) into .venv in the tree, once per tree;\n" +
			"# attempts then run .venv/bin/python, read-only and offline. $HOME is private, so --user would be lost.",
	}
}

// nodePrepare installs node_modules from the lock file there is: npm ci
// for package-lock.json, else yarn or pnpm with a frozen lock file.
func nodePrepare(fsys fs.FS) *Prepare {
	for _, c := range []struct {
		lock string
		run  []string
	}{
		{"package-lock.json", []string{"npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund"}},
		{"yarn.lock", []string{"yarn", "install", "--frozen-lockfile", "--ignore-scripts"}},
		{"pnpm-lock.yaml", []string{"pnpm", "install", "--frozen-lockfile", "--ignore-scripts"}},
	} {
		if fi, err := fs.Stat(fsys, c.lock); err != nil || !fi.Mode().IsRegular() {
			continue
		}
		return &Prepare{
			Run:     c.run,
			Network: true,
			Budget:  10 * time.Minute,
			Why: "a guess: " + c.lock + " is there, so " + c.run[0] + " installs node_modules once per tree (scripts off);\n" +
				"# attempts see it read-only and stay offline.",
		}
	}
	return nil
}

// Render writes the plan as a commented flakegate.yaml and checks it with
// config.Load (the file a check will read).
func Render(pl *Plan, hook bool) ([]byte, error) {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("# flakegate.yaml, written by `flakegate init`. Commit it on the base branch: a check\n")
	w("# reads it from the base revision, never from the candidate. Every key is described in\n")
	w("# https://github.com/flakegate/flakegate/blob/main/docs/configuration.md\n")
	w("version: 1\n")
	w("retry_cap: 2            # retries after a failed first run; a pass among them is SCHEDULER\n")
	w("workers: 1              # triples run at once\n")
	w("freeze:\n  expires_after_runs: 20\n")
	w("# A flake this base was never seen failing (flake_origin new or unknown) may be the\n")
	w("# patch's own: the check exits 1. When it fires, look at the attempts and the base probe;\n")
	w("# if the flake is old, not the patch's, run `flakegate freeze grant --allow-new-flake`.\n")
	w("reject_new_flakes: true\n")
	if pl.PrepareTop != nil {
		writePrepare(&b, "", pl.PrepareTop)
	}
	w("properties:\n")
	framework := ""
	for _, e := range pl.Entries {
		if e.Test.Framework != framework {
			framework = e.Test.Framework
			w("\n  # %s\n", framework)
			if e.Prepare == nil {
				w("  # %s\n", noPrepareNote[framework])
			}
			if (framework == discover.VitestFastCheck || framework == discover.JestFastCheck) && !hook {
				w("  # WARNING: no file here reads %s; until a setup file passes it to\n", discover.SeedEnv)
				w("  # fc.configureGlobal (docs/writing-properties.md), every seed draws random inputs.\n")
			}
		}
		w("  - path: %s\n", yamlString(e.Test.Path))
		w("    name: %s\n", yamlString(e.Test.Name))
		seeds := make([]string, len(Seeds))
		for i, s := range Seeds {
			seeds[i] = strconv.Itoa(s)
		}
		w("    seeds: [%s]\n", strings.Join(seeds, ", "))
		w("    random_seeds: %d         # seeds drawn per candidate, besides the fixed ones\n", RandomSeeds)
		w("    run: %s\n", yamlList(e.Run))
		if e.PassMarker != "" {
			w("    pass_marker: %s   # the runner's own summary: exactly one test ran and passed\n", yamlString(e.PassMarker))
		}
		w("    wall_budget: %s         # %s\n", formatDuration(e.WallBudget), e.BudgetNote)
		if pl.PrepareTop == nil && e.Prepare != nil {
			writePrepare(&b, "    ", e.Prepare)
		}
	}
	out := []byte(b.String())
	if _, err := config.Load(out, config.DefaultPath); err != nil {
		return nil, fmt.Errorf("the generated file does not load: %w", err)
	}
	return out, nil
}

// noPrepareNote says why an ecosystem's entries have no prepare.
var noPrepareNote = map[string]string{
	discover.GoRapid:          "No prepare: every attempt's Go build cache is the host's, warm and read-only.",
	discover.PytestHypothesis: "No prepare: no setup.py or installable pyproject.toml; the tests import the tree as it is.",
	discover.VitestFastCheck:  "No prepare: no package-lock.json, yarn.lock or pnpm-lock.yaml; add one that installs node_modules.",
	discover.JestFastCheck:    "No prepare: no package-lock.json, yarn.lock or pnpm-lock.yaml; add one that installs node_modules.",
}

func writePrepare(b *strings.Builder, indent string, p *Prepare) {
	fmt.Fprintf(b, "%s# %s\n", indent, strings.ReplaceAll(p.Why, "\n# ", "\n"+indent+"# "))
	fmt.Fprintf(b, "%sprepare:\n", indent)
	fmt.Fprintf(b, "%s  run: %s\n", indent, yamlList(p.Run))
	fmt.Fprintf(b, "%s  network: %t\n", indent, p.Network)
	fmt.Fprintf(b, "%s  budget: %s\n", indent, formatDuration(p.Budget))
}

// yamlString quotes s as a YAML double-quoted scalar (JSON's escapes are
// YAML's).
func yamlString(s string) string {
	return strconv.Quote(s)
}

func yamlList(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = yamlString(x)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// formatDuration writes d as "90s", "5m" or "1m30s".
func formatDuration(d time.Duration) string {
	d = d.Round(time.Second)
	if d%time.Minute == 0 {
		return strconv.Itoa(int(d/time.Minute)) + "m"
	}
	if d < time.Minute {
		return strconv.Itoa(int(d/time.Second)) + "s"
	}
	return fmt.Sprintf("%dm%ds", int(d/time.Minute), int(d%time.Minute/time.Second))
}

// MeasuredBudget is the budget for one bare run that took took: MeasureFactor
// times it, rounded up to 10 s, at least MeasureFloor, at most
// config.MaxWallBudget.
func MeasuredBudget(took time.Duration) time.Duration {
	b := took * MeasureFactor
	b = (b + 10*time.Second - 1) / (10 * time.Second) * (10 * time.Second)
	return min(max(b, MeasureFloor), config.MaxWallBudget)
}
