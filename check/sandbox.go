package check

import (
	"context"
	"path/filepath"

	sitepkg "github.com/flakegate/flakegate/site"

	"github.com/flakegate/flakegate/attempt/sandbox"
	"github.com/flakegate/flakegate/config"
)

// setupIsolation resolves the sandbox of the base config for every
// attempt of this check, from opts and the file ledger at ledgerPath (""
// for none), which no attempt may reach.
func (c *site) setupIsolation(ctx context.Context, opts SiteOptions, ledgerPath string) error {
	guarded := []string{c.top, c.common, c.outDir, sitepkg.ShmUserDir()} // the last: the trees on a tmpfs (treeroot.go)
	if ledgerPath != "" {
		if abs, err := filepath.Abs(ledgerPath); err == nil {
			guarded = append(guarded, abs)
		}
	}
	spec := sitepkg.Spec{Op: "check", CfgPath: c.cfgPath, Block: &c.cfg.Sandbox, Env: opts.Env, Secrets: opts.Secrets,
		NoOverlay: opts.NoOverlay, Bwrap: opts.Bwrap, Guarded: guarded,
		OptOut: "opt out in the base config with sandbox: {mode: none} (records then say \"isolation\": \"none\" and earn no freeze)"}
	if c.cfg.Sandbox.Mode != config.SandboxNone {
		// Every other worktree of the repository, as well as the gate's
		// own state.
		others, err := c.git.Worktrees(ctx)
		if err != nil {
			return err
		}
		spec.Hide = append(append([]string(nil), guarded...), others...)
	}
	iso, err := sitepkg.BuildIsolation(spec)
	if err != nil {
		return err
	}
	// Fresh copies (where no overlay can be mounted) beside the
	// worktrees: on their file system, where a reflink can share blocks.
	iso.Sandbox.CopyDir = filepath.Join(c.common, "flakegate", "copies")
	c.iso = iso
	// The attempts' Go caches are the repository's, built from the base
	// (gocachesite.go); the runner's own are hidden.
	c.goc, err = sitepkg.SetupGoCaches(ctx, c.git, c.common, c.baseSHA, iso, sitepkg.EnvGetter(opts.Env))
	return err
}

// sandboxFor is the sandbox of one attempt in tree, nil without bwrap.
func (c *site) sandboxFor(tree string) *sandbox.Sandbox { return c.iso.SandboxFor(tree) }

// redact replaces every secret value in s.
func (c *site) redact(s string) string {
	if c.iso == nil {
		return s
	}
	return c.iso.Redact(s)
}

// probeSandbox finds the isolation this host gives the attempts (in trees
// under root), says it on stderr ("sandbox: ..."), and refuses a limit
// the config asks for that the host cannot enforce (Isolation.ProbeTrees).
func (c *site) probeSandbox(ctx context.Context, root string) (overlay bool, why string, err error) {
	return c.iso.ProbeTrees(ctx, root, c.goc, c.say)
}
