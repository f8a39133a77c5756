package check

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/digest"
	"github.com/flakegate/flakegate/runner"
)

// FixtureAbsent is the fixture_sha256 recorded when the candidate has no
// file or folder at the fixture path: it never equals a digest, so the
// decision table says FIXTURE.
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
	watch            []string // watch_paths of its records (config, ledger)
	contaminated     []string // watched paths of its triples found in the diff
}

// preflight checks every property against the base worktree and digests
// the property files and fixtures on both sides. A config that names a
// file the base does not have, or a command that does not exist, is a
// configuration error (EINVALID): no triple could be judged fairly.
func (c *checker) preflight(ctx context.Context) error {
	base, cand := c.trees.workers[0].base.dir, c.trees.workers[0].cand[0].dir
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
		if err := c.checkBaseFile(base, ps.key+".fixture", p.Fixture, "fixture"); err != nil {
			return err
		}
		if err := c.checkCommand(base, ps.key, p); err != nil {
			return err
		}
		if ps.basePropertySHA256, err = c.digestIn(ctx, base, p.Path); err != nil {
			return err
		}
		if ps.baseFixtureSHA256, err = c.digestIn(ctx, base, p.Fixture); err != nil {
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
		ps.candFixtureSHA256, err = c.digestIn(ctx, cand, p.Fixture)
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
		c.props = append(c.props, ps)
	}
	return nil
}

// checkBaseFile requires rel to exist in the base worktree and to stay
// inside it once symlinks are followed.
func (c *checker) checkBaseFile(root, key, rel, what string) error {
	p := filepath.Join(root, filepath.FromSlash(rel))
	if _, err := os.Lstat(p); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return &flakegate.Error{Code: flakegate.EINVALID, Op: "config", Path: c.cfgPath,
				Message: fmt.Sprintf("%s: the %s %s does not exist at the base revision %s", key, what, rel, short(c.baseSHA)),
				Hint:    "commit it on the base branch first, or fix the path in " + c.cfgPath}
		}
		return &flakegate.Error{Code: flakegate.EINTERNAL, Op: "check", Path: p, Err: err}
	}
	return c.insideTree(root, key, rel)
}

// insideTree refuses a path whose symlinks lead out of the worktree.
func (c *checker) insideTree(root, key, rel string) error {
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
func (c *checker) checkCommand(base, key string, p *config.Property) error {
	argv, err := runner.Expand(p.Run, runner.Vars{Path: p.Path, Seed: p.Seeds[0].String(), Samples: strconv.Itoa(p.Samples), Fixture: p.Fixture})
	if err != nil {
		return &flakegate.Error{Code: flakegate.EINVALID, Op: "config", Path: c.cfgPath, Message: key + ".run: " + err.Error()}
	}
	prog := argv[0]
	if strings.Contains(prog, "/") {
		if filepath.IsAbs(prog) {
			_, err = os.Stat(prog)
		} else {
			_, err = os.Stat(filepath.Join(base, prog))
		}
	} else {
		_, err = lookPath(prog, c.iso.env)
	}
	if err != nil {
		return &flakegate.Error{Code: flakegate.EINVALID, Op: "config", Path: c.cfgPath,
			Message: fmt.Sprintf("%s.run[0]: the test command %q was not found", key, prog),
			Hint:    "install it or put it on PATH, or fix run in " + c.cfgPath}
	}
	return nil
}

// lookPath finds prog in the PATH of env (flakegate's own when env is nil).
func lookPath(prog string, env []string) (string, error) {
	if env == nil {
		return exec.LookPath(prog)
	}
	pathVar := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			pathVar = v
		}
	}
	for _, dir := range filepath.SplitList(pathVar) {
		if dir == "" {
			continue
		}
		f := filepath.Join(dir, prog)
		if fi, err := os.Stat(f); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return f, nil
		}
	}
	return "", exec.ErrNotFound
}

func candidateGap(err error) bool {
	code := flakegate.ErrorCode(err)
	return code == flakegate.ENOTFOUND || code == flakegate.EINVALID
}

// digestIn digests rel inside the worktree root.
func (c *checker) digestIn(ctx context.Context, root, rel string) (string, error) {
	if err := c.insideTree(root, rel, rel); err != nil {
		return "", err
	}
	sum, err := digest.Path(ctx, filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil && ctx.Err() != nil {
		return "", interrupted(ctx)
	}
	return sum, err
}
