package check

import (
	"context"
	"encoding/json"
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
	"github.com/flakegate/flakegate/batch"
	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/digest"
	"github.com/flakegate/flakegate/evidence"
	"github.com/flakegate/flakegate/grade"
	"github.com/flakegate/flakegate/grade/infra"
	sitepkg "github.com/flakegate/flakegate/site"
	"github.com/flakegate/flakegate/template"

	"github.com/flakegate/flakegate/internal/lazyre"
)

// FixtureAbsent is the fixture_sha256 recorded when the candidate has no
// file or folder at the fixture path of a property that has a fixture: it
// never equals a digest, so the decision table says FIXTURE. A property
// without a fixture records config.NoFixtureSHA256 on both sides instead.
const FixtureAbsent = "absent"

// propState is what a check learns once per property, in the freshly
// prepared worktrees: the digests of both sides.
type propState struct {
	index int
	prop  *config.Property
	key   string // "properties[i]" for messages

	basePropertySHA256 string
	candPropertySHA256 string // the base's when the candidate deleted the file
	baseFixtureSHA256  string
	candFixtureSHA256  string // FixtureAbsent when the candidate has none
	candFixtureReason  string

	baseEnv, candEnv flakegate.Env
	watch            []string // watch_paths of its records (config, ledger, matched diff paths)
	contaminated     []string // watched paths of its triples found in the diff
	watchWhy         []string // for each contaminated path, the glob that watches it
	// graderEdits are the patch's edits to its test's file and world
	// that the graded tree took back (graded.go): a failure of its base
	// version there is CONTAMINATED (record.go).
	graderEdits []grade.Edit

	prepareSHA256 string // digest of its prepare's command and environment ("" for none)

	framework   string           // batch.EvidenceFramework of the property
	runSHA256   string           // digest of the argv template
	corpus      []flakegate.Seed // the failure corpus's seeds for this base (corpus.go)
	entrySHA256 string           // digest of the config entry
}

// preflight checks every property against the base worktree and digests
// the property files and fixtures on both sides. A config that names a
// file the base does not have, or a command that does not exist, is a
// configuration error (EINVALID): no triple could be judged fairly.
func (c *checker) preflight(ctx context.Context) error {
	base, cand := c.trees.Workers[0].Base.Dir, c.trees.Workers[0].Cand[0].Dir
	baseFS, err := fileSystem(base)
	if err != nil {
		return &flakegate.Error{Code: flakegate.EINTERNAL, Op: "check", Path: base, Message: "statfs", Err: err}
	}
	candFS, err := fileSystem(cand)
	if err != nil {
		return &flakegate.Error{Code: flakegate.EINTERNAL, Op: "check", Path: cand, Message: "statfs", Err: err}
	}
	for i := range c.cfg.Properties {
		p := &c.cfg.Properties[i]
		ps := &propState{index: i, prop: p, key: fmt.Sprintf("properties[%d]", i)}
		if err := c.checkBaseFile(base, ps.key+".path", p.Path, "property file"); err != nil {
			return err
		}
		if p.Fixture != "" {
			if err := c.checkBaseFile(base, ps.key+".fixture", p.Fixture, "fixture"); err != nil {
				return err
			}
		}
		if err := c.checkCommand(base, ps.key, p); err != nil {
			return err
		}
		ps.framework = batch.EvidenceFramework(p)
		ps.runSHA256 = RunSHA256(p)
		ps.entrySHA256 = EntrySHA256(c.cfg, p)
		if err := c.checkSeeds(base, ps); err != nil {
			return err
		}
		if ps.basePropertySHA256, err = c.digestIn(ctx, base, p.Path); err != nil {
			return err
		}
		if p.Fixture == "" {
			ps.baseFixtureSHA256 = config.NoFixtureSHA256
		} else if ps.baseFixtureSHA256, err = c.digestIn(ctx, base, p.Fixture); err != nil {
			return err
		}
		// The candidate's files are the patch's: a missing or escaping one
		// is judged by the table (CONTAMINATED, FIXTURE), not refused.
		ps.candPropertySHA256, err = c.digestIn(ctx, cand, p.Path)
		if candidateGap(err) {
			ps.candPropertySHA256 = ps.basePropertySHA256 // deleted: in the diff, so CONTAMINATED
		} else if err != nil {
			return err
		}
		if p.Fixture == "" {
			ps.candFixtureSHA256, err = config.NoFixtureSHA256, nil
		} else {
			ps.candFixtureSHA256, err = c.digestIn(ctx, cand, p.Fixture)
		}
		if candidateGap(err) {
			ps.candFixtureSHA256, ps.candFixtureReason = FixtureAbsent, "the candidate's fixture cannot be digested: "+err.Error()
		} else if err != nil {
			return err
		}
		budget := p.WallBudget.Seconds()
		ps.baseEnv = flakegate.Env{Workers: c.cfg.Workers, ClockBudgetS: budget, Filesystem: baseFS}
		ps.candEnv = flakegate.Env{Workers: c.cfg.Workers, ClockBudgetS: budget, Filesystem: candFS}
		ps.watch = append([]string(nil), c.watch...)
		ps.contaminated = inDiff(c.diff, append(p.WatchPaths(), c.watch...))
		// Globs cannot go into a record: the diff paths they match do, so
		// the table itself says CONTAMINATED and names the file.
		globs, err := c.propGlobsGraded(ctx, p)
		if err != nil {
			return err
		}
		for _, d := range c.diff {
			for _, g := range globs {
				if config.MatchGlob(g.Glob, d) && c.watchedChange(ctx, d, g) {
					ps.watch = append(ps.watch, d)
					ps.contaminated = append(ps.contaminated, d)
					ps.watchWhy = append(ps.watchWhy, d+" ("+g.Why+")")
					break
				}
			}
		}
		ps.graderEdits = c.graded.EditsFor(p)
		c.props = append(c.props, ps)
	}
	return nil
}

// checkBaseFile requires rel to exist in the base worktree and to stay
// inside it once symlinks are followed.
func (c *site) checkBaseFile(root, key, rel, what string) error {
	p := filepath.Join(root, filepath.FromSlash(rel))
	if _, err := os.Lstat(p); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return &flakegate.Error{Code: flakegate.EINVALID, Op: "config", Path: c.cfgPath,
				Message: fmt.Sprintf("%s: the %s %s does not exist at the base revision %s", key, what, rel, flakegate.ShortSHA(c.baseSHA)),
				Hint:    "commit it on the base branch first, or fix the path in " + c.cfgPath}
		}
		return &flakegate.Error{Code: flakegate.EINTERNAL, Op: "check", Path: p, Err: err}
	}
	return c.insideTree(root, key, rel)
}

// insideTree refuses a path whose symlinks lead out of the worktree.
func (c *site) insideTree(root, key, rel string) error {
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
		return &flakegate.Error{Code: flakegate.EINVALID, Op: "config", Path: c.cfgPath,
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
func (c *checker) checkCommand(base, key string, p *config.Property) error {
	argv, err := template.Expand(p.Run, batch.Vars(p, flakegate.Seed("1")))
	if err != nil {
		return &flakegate.Error{Code: flakegate.EINVALID, Op: "config", Path: c.cfgPath, Message: key + ".run: " + err.Error()}
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
		_, err = attempt.LookPath(prog, c.iso.Env)
	}
	if err != nil {
		return &flakegate.Error{Code: flakegate.EINVALID, Op: "config", Path: c.cfgPath,
			Message: fmt.Sprintf("%s.run[0]: the test command %q was not found", key, prog),
			Hint:    "install it or put it on PATH, or fix run in " + c.cfgPath}
	}
	return nil
}

func candidateGap(err error) bool {
	code := flakegate.ErrorCode(err)
	return code == flakegate.ENOTFOUND || code == flakegate.EINVALID
}

// digestIn digests rel inside the worktree root.
func (c *checker) digestIn(ctx context.Context, root, rel string) (string, error) {
	key := root + "\x00" + rel
	if d, ok := c.digests[key]; ok {
		return d.sum, d.err // a suite's tests share their files: each is digested once
	}
	if err := c.insideTree(root, rel, rel); err != nil {
		return "", err
	}
	sum, err := digest.Path(ctx, filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil && ctx.Err() != nil {
		return "", flakegate.Interrupted(ctx)
	}
	if c.digests == nil {
		c.digests = map[string]digested{}
	}
	c.digests[key] = digested{sum, err}
	return sum, err
}

// digested is one digestIn answer, kept for the preflight's other
// properties (the trees do not change during it).
type digested struct {
	sum string
	err error
}

// RunSHA256 is the digest of p's argv template (the record's extra key
// "run_sha256"): a freeze is bound to it.
func RunSHA256(p *config.Property) string {
	b, _ := json.Marshal(p.Run)
	return flakegate.SHA256Hex(b)
}

// EntrySHA256 is the digest of p's config entry as the check reads it
// (the record's extra key "property_entry_sha256"): path, name, fixture,
// generator, run, wall budget, samples, watch globs, pass and fail markers, the
// framework: key when the entry has one, batch: false, plus the
// retry cap and the global watch globs. The seed lists are not part of it:
// adding a seed does not void the freezes of the others.
func EntrySHA256(cfg *config.Config, p *config.Property) string {
	marker := ""
	if p.PassMarker != nil {
		marker = p.PassMarker.String()
	}
	failMarker := ""
	if p.FailMarker != nil {
		failMarker = p.FailMarker.String()
	}
	framework := ""
	if p.FrameworkSet {
		framework = p.Framework
	}
	b, _ := json.Marshal(struct {
		Path        string   `json:"path"`
		Name        string   `json:"name"`
		Fixture     string   `json:"fixture"`
		Generator   string   `json:"generator"`
		Run         []string `json:"run"`
		WallBudgetS float64  `json:"wall_budget_s"`
		Samples     int      `json:"samples"`
		Watch       []string `json:"watch"`
		PassMarker  string   `json:"pass_marker"`
		RetryCap    int      `json:"retry_cap"`
		GlobalWatch []string `json:"global_watch"`
		FailMarker  string   `json:"fail_marker,omitempty"` // omitted when unset: older entries keep their digest
		Framework   string   `json:"framework,omitempty"`   // the entry's own framework: key, omitted when absent
		// NoBatch is batch: false on a framework that batches: the triple
		// is judged alone, not among the tests of a batch (omitted when
		// unset, as FailMarker).
		NoBatch bool `json:"no_batch,omitempty"`
	}{p.Path, p.Name, p.Fixture, p.Generator, p.Run, p.WallBudget.Seconds(), p.Samples, p.Watch, marker, cfg.RetryCap, cfg.Watch, failMarker, framework, !p.Batch && p.Framework != config.FrameworkNone})
	return flakegate.SHA256Hex(b)
}

// watchGlob is one glob a property is graded against, and why (the
// type grade/infra lists what it finds in).
type watchGlob = infra.Watch

// propGlobs is watchGlobs plus the infrastructure found in the base
// revision (grade/infra), by the property's framework and its file's
// language.
func (c *checker) propGlobs(ctx context.Context, p *config.Property) ([]watchGlob, error) {
	return propGlobs(ctx, c.cfg, c.infra(), p)
}

// propGlobsGraded is propGlobs and what the graded tree could not take
// from the base (a go.mod it cannot read, a pytest plugin outside the
// test folders).
func (c *checker) propGlobsGraded(ctx context.Context, p *config.Property) ([]watchGlob, error) {
	globs, err := c.propGlobs(ctx, p)
	if err != nil || c.graded == nil {
		return globs, err
	}
	globs = c.dropGatedHelpers(p, globs)
	watched := c.graded.Plan.WatchedFor(p.Framework)
	for _, f := range slices.Sorted(maps.Keys(watched)) {
		globs = append(globs, watchGlob{Glob: f, Why: watched[f]})
	}
	return globs, nil
}

// goHelperWhy starts the reason grade/infra watches a Go package
// that only tests import.
const goHelperWhy = "a Go package of the module only tests import"

// dropGatedHelpers leaves out of a go suite test's globs the packages
// that only tests import but that the same suite gates (its own tests
// are listed): such a package is code under test (a library whose
// users' tests import it, cmpopts beside cmp), and every change to it is
// graded by its own base tests; watched, every patch to the library
// would be CONTAMINATED for its users' tests. A helper the suite does
// not gate (an internal/.../footest without tests) stays watched.
func (c *checker) dropGatedHelpers(p *config.Property, globs []watchGlob) []watchGlob {
	if p.Suite == nil || p.Framework != config.FrameworkGo || c.suite.lists[p.Suite.Index] == nil {
		return globs
	}
	if c.gatedPkgs == nil {
		c.gatedPkgs = map[int]map[string]bool{}
	}
	gated := c.gatedPkgs[p.Suite.Index]
	if gated == nil {
		gated = map[string]bool{}
		for _, t := range c.suite.lists[p.Suite.Index].Tests {
			gated[path.Dir(t.File)] = true
		}
		c.gatedPkgs[p.Suite.Index] = gated
	}
	return slices.DeleteFunc(globs, func(g watchGlob) bool {
		return strings.HasPrefix(g.Why, goHelperWhy) && gated[path.Dir(g.Glob)]
	})
}

// propGlobs is what p of cfg is graded against besides its file and
// generator: watchGlobs, and what finder finds.
func propGlobs(ctx context.Context, cfg *config.Config, finder *infra.Finder, p *config.Property) ([]watchGlob, error) {
	found, err := finder.Find(ctx, p)
	if err != nil {
		return nil, err
	}
	return append(watchGlobs(cfg, p), found...), nil
}

// infra is the base revision's infrastructure finder, made once.
func (c *checker) infra() *infra.Finder {
	if c.baseInfra == nil {
		c.baseInfra = infra.New(c.git, c.baseSHA)
	}
	return c.baseInfra
}

// watchGlobs lists the globs of p besides its file and generator: the
// framework's defaults (from its framework and its file), the property's watch and the
// global watch. propGlobs adds what it finds in the base
// revision: pytest helper modules, vitest and jest files.
//
//   - pytest: conftest.py, pytest.ini, pyproject.toml, setup.cfg and
//     tox.ini in the property's folder and every folder above it up to
//     the root (pytest reads each of them to decide how a test runs),
//     except pyproject.toml when the property has a prepare: with go.mod,
//     go.sum, setup.py and package-lock.json it decides what the prepare
//     builds, which a patch may change (its prepared layer then differs);
//   - go test: every *_test.go file of the property's package folder (a
//     TestMain or init there decides whether the test runs) and the
//     package's testdata/rapid fail files.
func watchGlobs(cfg *config.Config, p *config.Property) []watchGlob {
	var out []watchGlob
	dir := path.Dir(p.Path)
	if p.Framework == config.FrameworkPytest || config.FrameworkOfFile(p.Path, nil) == config.FrameworkPytest {
		for d := dir; ; d = path.Dir(d) {
			for _, f := range []string{"conftest.py", "pytest.ini", "pyproject.toml", "setup.cfg", "tox.ini"} {
				if f == "pyproject.toml" && p.Prepare != nil {
					continue // it decides the prepare: a patch may change it (see prepare.go)
				}
				out = append(out, watchGlob{Glob: path.Join(d, f), Why: "pytest configuration"})
			}
			if d == "." {
				break
			}
		}
	}
	if (p.Framework == config.FrameworkGo || strings.HasSuffix(p.Path, "_test.go")) && p.Suite == nil {
		out = append(out, watchGlob{Glob: path.Join(dir, "*_test.go"), Why: "a test file of the property's Go package"})
	}
	// A suite's test runs on the base's test files (check/suite.go): the
	// package's other test files cannot change it, and are not watched.
	if p.Framework == config.FrameworkGo || strings.HasSuffix(p.Path, "_test.go") {
		out = append(out, watchGlob{Glob: path.Join(dir, "testdata/rapid/**"), Why: "rapid fail files of the property's package"})
	}
	if batch.IsJS(p.Framework) {
		for d := dir; ; d = path.Dir(d) {
			for _, f := range grade.LockFiles {
				out = append(out, watchGlob{Glob: path.Join(d, f), Why: lockWhy})
			}
			if d == "." {
				break
			}
		}
	}
	for _, g := range p.Watch {
		out = append(out, watchGlob{Glob: g, Why: "the property's watch"})
	}
	for _, g := range cfg.Watch {
		out = append(out, watchGlob{Glob: g, Why: "the global watch"})
	}
	return out
}

// rapidSeedRe finds a rapid seed flag filled from {seed}.
var rapidSeedRe = lazyre.New(`^-?-rapid\.seed=\{seed\}$`)

// derandomizeRe finds a hypothesis setting that ignores --hypothesis-seed.
var derandomizeRe = lazyre.New(`(?i)derandomize\s*[=:]\s*true`)

// checkSeeds refuses seeds a framework would not honour: seed 0 for rapid
// (-rapid.seed=0 means "pick a random seed"), and any seed for pytest when
// a hypothesis profile in the watched configuration files or the property
// file sets derandomize (hypothesis then ignores --hypothesis-seed).
func (c *checker) checkSeeds(base string, ps *propState) error {
	p := ps.prop
	refuse := func(msg, hint string) error {
		return &flakegate.Error{Code: flakegate.EINVALID, Op: "config", Path: c.cfgPath, Message: ps.key + ": " + msg, Hint: hint}
	}
	switch ps.framework {
	case evidence.FrameworkGo:
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
	case evidence.FrameworkPytest:
		uses := false
		for _, a := range p.Run {
			uses = uses || strings.HasPrefix(a, "--hypothesis-seed")
		}
		if !uses {
			return nil
		}
		files := []string{p.Path}
		for _, g := range watchGlobs(c.cfg, p) {
			if g.Why == "pytest configuration" {
				files = append(files, g.Glob)
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

// WatchList is what one property is graded against: a candidate diff
// path matching any entry makes its triples CONTAMINATED.
type WatchList struct {
	Property  string      `json:"property"` // path or path::name
	Framework string      `json:"framework,omitempty"`
	Prepare   []string    `json:"prepare,omitempty"` // the prepare's command, run once per tree
	Watch     []WatchItem `json:"watch"`
}

// WatchItem is one watched path or glob and why it is watched.
type WatchItem struct {
	Glob string `json:"glob"`
	Why  string `json:"why"`
}

// ExplainWatch lists what each property of b's config watches, with the
// file ledger at ledgerPath ("" for none), without running anything.
func ExplainWatch(ctx context.Context, b *sitepkg.Base, ledgerPath string) ([]WatchList, error) {
	ledger, err := ledgerWatch(b.Top, ledgerPath)
	if err != nil {
		return nil, err
	}
	watch := append([]string{b.ConfigPath}, ledger...)
	finder := infra.New(b.Git, b.SHA)
	var out []WatchList
	for i := range b.Config.Properties {
		p := &b.Config.Properties[i]
		wl := WatchList{Property: p.ID(), Framework: p.Framework}
		if p.Prepare != nil {
			wl.Prepare = p.Prepare.Run
		}
		wl.Watch = append(wl.Watch, WatchItem{p.Path, "the property file"})
		if p.Generator != "" {
			wl.Watch = append(wl.Watch, WatchItem{p.Generator, "the fixture generator"})
		}
		for _, w := range watch {
			why := "the config"
			if w != b.ConfigPath {
				why = "the ledger (inside the repository)"
			}
			wl.Watch = append(wl.Watch, WatchItem{w, why})
		}
		globs, err := propGlobs(ctx, b.Config, finder, p)
		if err != nil {
			return nil, err
		}
		for _, g := range globs {
			wl.Watch = append(wl.Watch, WatchItem{g.Glob, g.Why})
		}
		out = append(out, wl)
	}
	return out, nil
}
