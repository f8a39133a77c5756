// The preflight of a check's properties: every property checked against
// the base worktree (its files, its command, its seeds), the digests of
// its file and fixture on both sides, and the paths of the diff that
// make its triples CONTAMINATED (its watched paths and globs, with the
// infrastructure grade/infra finds and what the graded tree could not
// take back).

package grade

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/attempt"
	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/digest"
	"github.com/flakegate/flakegate/git"
	"github.com/flakegate/flakegate/grade/infra"
	"github.com/flakegate/flakegate/internal/lazyre"
	"github.com/flakegate/flakegate/template"
)

// Grader grades a check's properties: it reads the two revisions through
// git and the two freshly prepared worktrees, and runs nothing. The
// check fills it once its graded candidate is made and its suites are
// listed; its answers are kept for the other properties (a suite's
// tests share their files), so it is used by one goroutine at a time.
type Grader struct {
	Git        *git.Client
	BaseSHA    string
	CandSHA    string
	GradedSHA  string  // the commit the candidate's trees check out
	Graded     *Graded // the graded candidate, nil for none
	Config     *config.Config
	ConfigPath string
	Watch      []string // the config and an in-repository ledger: every triple's watch_paths
	Diff       []string // where the graded tree differs from the base
	Finder     *infra.Finder
	// Env is the environment the test commands' programs are looked up
	// in; Vars are the placeholder values of one seed of a property.
	Env  []string
	Vars func(p *config.Property, seed flakegate.Seed) template.Vars
	// SuiteFiles lists the test files a suite's listing holds, by the
	// suite's index (nil for a suite that is not listed).
	SuiteFiles func(suite int) []string

	digests     map[string]digested     // digestIn's answers by tree and path
	partChanged map[string]bool         // watchedChange's answers by glob and path
	gatedPkgs   map[int]map[string]bool // the Go package folders each go suite gates, by suite index
}

// Property is what a check learns once per property, in the freshly
// prepared worktrees: the digests of both sides and what the diff
// changes of what it is graded on.
type Property struct {
	BasePropertySHA256 string
	CandPropertySHA256 string // the base's when the candidate deleted the file
	BaseFixtureSHA256  string
	CandFixtureSHA256  string // FixtureAbsent when the candidate has none
	CandFixtureReason  string

	Watch        []string // watch_paths of its records (config, ledger, matched diff paths)
	Contaminated []string // watched paths of its triples found in the diff
	WatchWhy     []string // for each contaminated path, the glob that watches it
	// GraderEdits are the patch's edits to its test's file and world
	// that the graded tree took back: a failure of its base version
	// there is CONTAMINATED (GraderEdits, AddGraderKeys).
	GraderEdits []Edit

	RunSHA256   string // digest of the argv template
	EntrySHA256 string // digest of the config entry
}

// Preflight checks p, the property at key ("properties[i]"), against the
// base worktree base and digests its file and fixture there and in the
// candidate's worktree cand. A config that names a file the base does not
// have, or a command that does not exist, is a configuration error
// (EINVALID): no triple could be judged fairly.
func (g *Grader) Preflight(ctx context.Context, key string, p *config.Property, base, cand string) (*Property, error) {
	if err := CheckBaseFile(g.ConfigPath, g.BaseSHA, base, key+".path", p.Path, "property file"); err != nil {
		return nil, err
	}
	if p.Fixture != "" {
		if err := CheckBaseFile(g.ConfigPath, g.BaseSHA, base, key+".fixture", p.Fixture, "fixture"); err != nil {
			return nil, err
		}
	}
	if err := g.checkCommand(base, key, p); err != nil {
		return nil, err
	}
	ps := &Property{RunSHA256: RunSHA256(p), EntrySHA256: EntrySHA256(g.Config, p)}
	if err := g.checkSeeds(base, key, p); err != nil {
		return nil, err
	}
	if err := g.digestSides(ctx, ps, p, base, cand); err != nil {
		return nil, err
	}
	ps.Watch = append([]string(nil), g.Watch...)
	ps.Contaminated = InDiff(g.Diff, append(p.WatchPaths(), g.Watch...))
	// Globs cannot go into a record: the diff paths they match do, so
	// the table itself says CONTAMINATED and names the file.
	globs, err := g.propGlobsGraded(ctx, p)
	if err != nil {
		return nil, err
	}
	for _, d := range g.Diff {
		for _, gl := range globs {
			if config.MatchGlob(gl.Glob, d) && g.watchedChange(ctx, d, gl) {
				ps.Watch = append(ps.Watch, d)
				ps.Contaminated = append(ps.Contaminated, d)
				ps.WatchWhy = append(ps.WatchWhy, d+" ("+gl.Why+")")
				break
			}
		}
	}
	ps.GraderEdits = g.Graded.EditsFor(p)
	return ps, nil
}

// digestSides digests p's file and fixture in the base worktree and in
// the candidate's.
func (g *Grader) digestSides(ctx context.Context, ps *Property, p *config.Property, base, cand string) error {
	var err error
	if ps.BasePropertySHA256, err = g.digestIn(ctx, base, p.Path); err != nil {
		return err
	}
	if p.Fixture == "" {
		ps.BaseFixtureSHA256 = config.NoFixtureSHA256
	} else if ps.BaseFixtureSHA256, err = g.digestIn(ctx, base, p.Fixture); err != nil {
		return err
	}
	// The candidate's files are the patch's: a missing or escaping one
	// is judged by the table (CONTAMINATED, FIXTURE), not refused.
	ps.CandPropertySHA256, err = g.digestIn(ctx, cand, p.Path)
	if candidateGap(err) {
		ps.CandPropertySHA256 = ps.BasePropertySHA256 // deleted: in the diff, so CONTAMINATED
	} else if err != nil {
		return err
	}
	if p.Fixture == "" {
		ps.CandFixtureSHA256, err = config.NoFixtureSHA256, nil
	} else {
		ps.CandFixtureSHA256, err = g.digestIn(ctx, cand, p.Fixture)
	}
	if candidateGap(err) {
		ps.CandFixtureSHA256, ps.CandFixtureReason = FixtureAbsent, "the candidate's fixture cannot be digested: "+err.Error()
	} else if err != nil {
		return err
	}
	return nil
}

// CheckBaseFile requires rel to exist in the base worktree root (of the
// revision baseSHA) and to stay inside it once symlinks are followed;
// key names it in the config at cfgPath.
func CheckBaseFile(cfgPath, baseSHA, root, key, rel, what string) error {
	p := filepath.Join(root, filepath.FromSlash(rel))
	if _, err := os.Lstat(p); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return &flakegate.Error{Code: flakegate.EINVALID, Op: "config", Path: cfgPath,
				Message: fmt.Sprintf("%s: the %s %s does not exist at the base revision %s", key, what, rel, flakegate.ShortSHA(baseSHA)),
				Hint:    "commit it on the base branch first, or fix the path in " + cfgPath}
		}
		return &flakegate.Error{Code: flakegate.EINTERNAL, Op: "check", Path: p, Err: err}
	}
	return insideTree(cfgPath, root, key, rel)
}

// insideTree refuses a path whose symlinks lead out of the worktree.
func insideTree(cfgPath, root, key, rel string) error {
	p := filepath.Join(root, filepath.FromSlash(rel))
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return nil // a dangling link: the digest reports it
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return &flakegate.Error{Code: flakegate.EINTERNAL, Op: "check", Path: root, Err: err}
	}
	if r, err := filepath.Rel(realRoot, real); err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return &flakegate.Error{Code: flakegate.EINVALID, Op: "config", Path: cfgPath,
			Message: fmt.Sprintf("%s: %s is a symlink that leads out of the repository", key, rel)}
	}
	return nil
}

// checkCommand expands the run template once and looks its program up: a
// missing test command is a configuration error, not a crash per triple.
// A relative one that a prepare may make (.venv/bin/python) is not looked
// for in the base tree: the prepare has not run yet, and an attempt it
// cannot start is INCOMPLETE, its reason the shell's "not found"
// (doctor looks for it in the prepared tree).
func (g *Grader) checkCommand(base, key string, p *config.Property) error {
	argv, err := template.Expand(p.Run, g.Vars(p, flakegate.Seed("1")))
	if err != nil {
		return &flakegate.Error{Code: flakegate.EINVALID, Op: "config", Path: g.ConfigPath, Message: key + ".run: " + err.Error()}
	}
	prog := argv[0]
	if strings.Contains(prog, "/") {
		if filepath.IsAbs(prog) {
			_, err = os.Stat(prog)
		} else if p.Prepare != nil {
			err = nil
		} else {
			_, err = os.Stat(filepath.Join(base, prog))
		}
	} else {
		_, err = attempt.LookPath(prog, g.Env)
	}
	if err != nil {
		return &flakegate.Error{Code: flakegate.EINVALID, Op: "config", Path: g.ConfigPath,
			Message: fmt.Sprintf("%s.run[0]: the test command %q was not found", key, prog),
			Hint:    "install it or put it on PATH, or fix run in " + g.ConfigPath}
	}
	return nil
}

func candidateGap(err error) bool {
	code := flakegate.ErrorCode(err)
	return code == flakegate.ENOTFOUND || code == flakegate.EINVALID
}

// digestIn digests rel inside the worktree root.
func (g *Grader) digestIn(ctx context.Context, root, rel string) (string, error) {
	key := root + "\x00" + rel
	if d, ok := g.digests[key]; ok {
		return d.sum, d.err // a suite's tests share their files: each is digested once
	}
	if err := insideTree(g.ConfigPath, root, rel, rel); err != nil {
		return "", err
	}
	sum, err := digest.Path(ctx, filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil && ctx.Err() != nil {
		return "", flakegate.Interrupted(ctx)
	}
	if g.digests == nil {
		g.digests = map[string]digested{}
	}
	g.digests[key] = digested{sum, err}
	return sum, err
}

// digested is one digestIn answer, kept for the preflight's other
// properties (the trees do not change during it).
type digested struct {
	sum string
	err error
}

// PropGlobs is PropGlobs over the grader's config and finder.
func (g *Grader) PropGlobs(ctx context.Context, p *config.Property) ([]infra.Watch, error) {
	return PropGlobs(ctx, g.Config, g.Finder, p)
}

// propGlobsGraded is PropGlobs and what the graded tree could not take
// from the base (a go.mod it cannot read, a pytest plugin outside the
// test folders).
func (g *Grader) propGlobsGraded(ctx context.Context, p *config.Property) ([]infra.Watch, error) {
	globs, err := g.PropGlobs(ctx, p)
	if err != nil || g.Graded == nil {
		return globs, err
	}
	globs = g.dropGatedHelpers(p, globs)
	watched := g.Graded.Plan.WatchedFor(p.Framework)
	for _, f := range slices.Sorted(maps.Keys(watched)) {
		globs = append(globs, infra.Watch{Glob: f, Why: watched[f]})
	}
	return globs, nil
}

// dropGatedHelpers leaves out of a go suite test's globs the packages
// that only tests import but that the same suite gates (its own tests
// are listed): such a package is code under test (a library whose
// users' tests import it, cmpopts beside cmp), and every change to it is
// graded by its own base tests; watched, every patch to the library
// would be CONTAMINATED for its users' tests. A helper the suite does
// not gate (an internal/.../footest without tests) stays watched.
func (g *Grader) dropGatedHelpers(p *config.Property, globs []infra.Watch) []infra.Watch {
	if p.Suite == nil || p.Framework != config.FrameworkGo || g.SuiteFiles == nil {
		return globs
	}
	gated := g.gatedPkgs[p.Suite.Index]
	if gated == nil {
		files := g.SuiteFiles(p.Suite.Index)
		if files == nil {
			return globs
		}
		gated = map[string]bool{}
		for _, f := range files {
			gated[path.Dir(f)] = true
		}
		if g.gatedPkgs == nil {
			g.gatedPkgs = map[int]map[string]bool{}
		}
		g.gatedPkgs[p.Suite.Index] = gated
	}
	return slices.DeleteFunc(globs, func(w infra.Watch) bool {
		return strings.HasPrefix(w.Why, goHelperWhy) && gated[path.Dir(w.Glob)]
	})
}

// watchedChange reports whether d, a path of the diff that glob w
// watches, counts as a change of what grades the test: always, but for
// a file of pytest's config shared with other tools (pyproject.toml,
// setup.cfg, tox.ini), which counts only when pytest's part of it
// changes, package.json watched for its "jest" key, which counts only
// when that key changes, and a lock file, which counts only when it
// changes the test tooling's packages (each counts when it cannot be
// read).
func (g *Grader) watchedChange(ctx context.Context, d string, w infra.Watch) bool {
	mixed := w.Why == "pytest configuration" && MixedPytestFile(d)
	if !mixed && w.Why != jestKeyWhy && w.Why != lockWhy {
		return true
	}
	key := w.Why + "\x00" + d
	if got, ok := g.partChanged[key]; ok {
		return got // the preflight asks once per test of a suite
	}
	base, errB := g.Git.Show(ctx, g.BaseSHA, d)
	cand, errC := g.Git.Show(ctx, g.GradedSHA, d)
	changed := true // added or deleted
	switch {
	case errB != nil || errC != nil:
	case mixed:
		changed = PytestPartChanged(d, base, cand)
	case w.Why == lockWhy:
		changed = TestToolingChanged(d, base, cand)
	default:
		changed = JestKeyChanged(base, cand)
	}
	if g.partChanged == nil {
		g.partChanged = map[string]bool{}
	}
	g.partChanged[key] = changed
	return changed
}

// rapidSeedRe finds a rapid seed flag filled from {seed}.
var rapidSeedRe = lazyre.New(`^-?-rapid\.seed=\{seed\}$`)

// derandomizeRe finds a hypothesis setting that ignores --hypothesis-seed.
var derandomizeRe = lazyre.New(`(?i)derandomize\s*[=:]\s*true`)

// checkSeeds refuses seeds a framework would not honour: seed 0 for rapid
// (-rapid.seed=0 means "pick a random seed"), and any seed for pytest when
// a hypothesis profile in the watched configuration files or the property
// file sets derandomize (hypothesis then ignores --hypothesis-seed).
func (g *Grader) checkSeeds(base, key string, p *config.Property) error {
	refuse := func(msg, hint string) error {
		return &flakegate.Error{Code: flakegate.EINVALID, Op: "config", Path: g.ConfigPath, Message: key + ": " + msg, Hint: hint}
	}
	switch p.Framework {
	case config.FrameworkGo:
		for _, a := range p.Run {
			if !rapidSeedRe.MatchString(a) {
				continue
			}
			for _, s := range p.Seeds {
				if s.String() == "0" {
					return refuse("seed 0 makes rapid pick a random seed, so the run cannot be replayed", "use seeds of 1 or more")
				}
			}
		}
	case config.FrameworkPytest:
		uses := false
		for _, a := range p.Run {
			uses = uses || strings.HasPrefix(a, "--hypothesis-seed")
		}
		if !uses {
			return nil
		}
		files := []string{p.Path}
		for _, w := range WatchGlobs(g.Config, p) {
			if w.Why == "pytest configuration" {
				files = append(files, w.Glob)
			}
		}
		for _, f := range files {
			b, err := os.ReadFile(filepath.Join(base, filepath.FromSlash(f)))
			if err != nil {
				continue
			}
			if loc := derandomizeRe.FindIndex(b); loc != nil {
				line := 1 + strings.Count(string(b[:loc[0]]), "\n")
				return refuse(fmt.Sprintf("%s:%d sets hypothesis derandomize, which ignores --hypothesis-seed: every seed would run the same examples", f, line),
					"remove derandomize from the profile the gate runs, or load another profile (--hypothesis-profile)")
			}
		}
	}
	return nil
}
