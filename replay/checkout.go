// A seed of a config's property at a commit (flakegate replay --repo):
// the checkout of the graded tree, and the command check would run for
// that triple.

package replay

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/batch"
	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/git"
	"github.com/flakegate/flakegate/grade"
	"github.com/flakegate/flakegate/site"
)

// AtOptions name one seed of a config's property at a commit
// (flakegate replay --repo).
type AtOptions struct {
	// Repo is a folder of the repository.
	Repo string
	// Rev is the commit the checkout holds; the command comes from the
	// config at ConfigRev ("" is Rev): check writes its reproduce lines
	// with the base there, so the replay runs the command the gate ran.
	Rev, ConfigRev string
	// ConfigPath is the config's clean repo-relative path; "" is
	// flakegate.yaml.
	ConfigPath string
	// Property (clean, repo-relative) and Name pick the config entry.
	Property, Name string
	Seed           flakegate.Seed
	// Suite is the path of a suites: entry (as the config writes it):
	// Property and Name are then one of its tests (the file and name its
	// triple's record has), and the replay runs that test's batch.
	Suite string
}

// At is a temporary checkout of a commit and the replay of one
// seed in it, with the command check would run for that triple.
type At struct {
	SHA, ConfigSHA, ConfigPath string
	Property                   *config.Property
	// Options replay the seed in the checkout under the config's sandbox
	// block, with the evidence check asks for; New takes them.
	Options Options

	git  *git.Client
	tmp  string
	base string // a suite's: the checkout of the base it is listed in
}

// Checkout resolves the revisions, reads the config at ConfigRev,
// finds the property, expands its command and makes a checkout of Rev of
// its own (git worktree add --detach, in a temporary folder), which
// Remove deletes. Errors are EINVALID for a revision, config or property
// that does not resolve.
func Checkout(ctx context.Context, o AtOptions) (*At, error) {
	cfgPath := o.ConfigPath
	if cfgPath == "" {
		cfgPath = config.DefaultPath
	}
	g := &git.Client{Dir: o.Repo}
	if _, err := g.TopLevel(ctx); err != nil {
		return nil, err
	}
	sha, err := g.RevParse(ctx, o.Rev)
	if err != nil {
		return nil, err
	}
	cfgRev := o.ConfigRev
	if cfgRev == "" {
		cfgRev = sha
	}
	cfgSHA, err := g.RevParse(ctx, cfgRev)
	if err != nil {
		return nil, err
	}
	raw, err := g.Show(ctx, cfgSHA, cfgPath)
	if err != nil {
		if flakegate.ErrorCode(err) == flakegate.ENOTFOUND {
			return nil, &flakegate.Error{Code: flakegate.EINVALID, Op: "replay", Path: cfgPath,
				Message: "no such file at " + flakegate.ShortSHA(cfgSHA), Hint: "pass --config-rev with the revision that holds the config (check uses the base)"}
		}
		return nil, err
	}
	cfg, err := config.LoadWith(raw, cfgPath, site.ShowAt(ctx, g, cfgSHA))
	if err != nil {
		return nil, err
	}
	if o.Suite != "" {
		return checkoutSuiteReplay(ctx, o, g, sha, cfgSHA, cfgPath, cfg)
	}
	return checkoutPropertyReplay(ctx, o, g, sha, cfgSHA, cfgPath, cfg)
}

// checkoutPropertyReplay is Checkout for a property's triple.
func checkoutPropertyReplay(ctx context.Context, o AtOptions, g *git.Client, sha, cfgSHA, cfgPath string, cfg *config.Config) (*At, error) {
	var p *config.Property
	var ids []string
	for i := range cfg.Properties {
		q := &cfg.Properties[i]
		ids = append(ids, q.ID())
		if q.Path == o.Property && q.Name == o.Name {
			p = q
		}
	}
	if p == nil {
		return nil, &flakegate.Error{Code: flakegate.EINVALID, Op: "replay", Path: cfgPath,
			Message: fmt.Sprintf("no property %s at %s", (&config.Property{Path: o.Property, Name: o.Name}).ID(), flakegate.ShortSHA(cfgSHA)),
			Hint:    "the config names: " + strings.Join(ids, ", ")}
	}
	argv, err := batch.TripleArgv(p, o.Seed)
	if err != nil {
		return nil, err
	}
	// The check runs the graded tree (grade/graded.go): the base's property
	// file and its world over Rev's code.
	gt, err := grade.MakeGraded(ctx, g, cfg, cfgSHA, sha, []string{cfgPath})
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "flakegate-replay-")
	if err != nil {
		return nil, &flakegate.Error{Code: flakegate.EINTERNAL, Op: "replay", Message: "cannot create a temporary folder", Err: err}
	}
	r := &At{SHA: sha, ConfigSHA: cfgSHA, ConfigPath: cfgPath, Property: p, git: g, tmp: tmp,
		Options: Options{Dir: filepath.Join(tmp, "checkout"), Argv: argv, WallBudget: p.WallBudget,
			Sandbox: cfg.Sandbox, ConfigPath: cfgPath, Repo: o.Repo, Fixture: p.Fixture,
			Framework: batch.EvidenceFramework(p), Name: p.Name, PassMarker: p.PassMarker, FailMarker: p.FailMarker,
			GoBase: cfgSHA, Prepare: p.Prepare, PrepareTree: gt.SHA}}
	if err := g.PrepareWorktree(ctx, r.Options.Dir, gt.SHA); err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	return r, nil
}

// Remove unregisters the checkout and deletes it (the checkout is the
// replay's alone). It runs even when ctx has ended.
func (r *At) Remove(ctx context.Context) error {
	err := r.git.RemoveWorktree(context.WithoutCancel(ctx), r.Options.Dir)
	if r.base != "" {
		if berr := r.git.RemoveWorktree(context.WithoutCancel(ctx), r.base); err == nil {
			err = berr
		}
	}
	os.RemoveAll(r.tmp)
	return err
}
