package cli

import (
	"context"
	"fmt"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/internal/termsafe"
	"github.com/flakegate/flakegate/replay"
)

// repoMode is true for the --repo form of replay.
func (opts *ReplayOptions) repoMode() bool { return opts.Repo != "" || opts.Rev != "" }

// checkRepoFlags checks the flags of the --repo form, touching no disk.
func (opts *ReplayOptions) checkRepoFlags() error {
	switch {
	case opts.Repo == "" || opts.Rev == "":
		return replayUsage("--repo and --rev go together")
	case opts.Workdir != "" || opts.ExpectFixtureSHA256 != "" || opts.Fixture != "" || len(opts.Argv) > 0 || opts.Samples != 0:
		return replayUsage("with --repo the config gives the command, fixture and samples; drop --workdir, --expect-fixture-sha256, --fixture, --samples and the command")
	case opts.Suite != "" && opts.Name == "":
		return replayUsage("--suite needs --name: the test's name, as its record has it")
	case opts.Property == "" || opts.Seed == "":
		return replayUsage("--property and --seed are required")
	}
	return nil
}

// runReplayRepo is `flakegate replay --repo DIR --rev SHA ...`: one seed,
// once, in a temporary checkout of its own (replay.Checkout).
func runReplayRepo(ctx context.Context, opts *ReplayOptions) error {
	usage := replayUsage
	if err := opts.checkRepoFlags(); err != nil {
		return err
	}
	seed, err := flakegate.ParseSeed(opts.Seed)
	if err != nil {
		return err
	}
	prop, err := config.CleanRepoPath(opts.Property)
	if err != nil {
		return usage("--property: %v", err)
	}
	cfgPath := opts.Config
	if cfgPath == "" {
		cfgPath = config.DefaultPath
	}
	if cfgPath, err = config.CleanRepoPath(cfgPath); err != nil {
		return usage("--config: %v", err)
	}
	ra, err := replay.Checkout(ctx, replay.AtOptions{Repo: opts.Repo, Rev: opts.Rev, ConfigRev: opts.ConfigRev,
		ConfigPath: cfgPath, Property: prop, Name: opts.Name, Seed: seed, Suite: opts.Suite})
	if err != nil {
		return err
	}
	removed := false
	remove := func() {
		if removed {
			return
		}
		removed = true
		if err := ra.Remove(ctx); err != nil {
			fmt.Fprintf(opts.IO.ErrOut, "replay: note: could not remove the worktree %s: %v\n", ra.Options.Dir, termsafe.Line(err.Error()))
		}
	}
	defer remove()
	what := ra.Property.ID()
	if opts.Suite != "" {
		what = "suite " + opts.Suite + " test " + what
	}
	fmt.Fprintf(opts.IO.ErrOut, "replay: %s seed %s at %s (command from %s:%s)\n", termsafe.Line(what), seed.String(), flakegate.ShortSHA(ra.SHA), flakegate.ShortSHA(ra.ConfigSHA), termsafe.Line(ra.ConfigPath))
	ro := ra.Options
	if ro.Sandbox.Mode == config.SandboxNone && opts.Sandbox != config.SandboxNone {
		fmt.Fprintf(opts.IO.ErrOut, "replay: the config says sandbox: {mode: none}, and replay runs its command in the sandbox all the same "+
			"(a config may be the patch's own); pass --sandbox none to run it without one\n")
	}
	ro.Sandbox = opts.sandbox(&ro.Sandbox)
	return replayRun(ctx, opts, ro, remove) // the checkout goes before the outcome, so that the outcome is the last line
}
