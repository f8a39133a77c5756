package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/digest"
	"github.com/flakegate/flakegate/git"
	"github.com/flakegate/flakegate/internal/termsafe"
	"github.com/flakegate/flakegate/runner"
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
	case opts.Property == "" || opts.Seed == "":
		return replayUsage("--property and --seed are required")
	}
	return nil
}

// runReplayRepo is `flakegate replay --repo DIR --rev SHA ...`: one seed,
// once, in a temporary checkout of its own.
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
	g := &git.Client{Dir: opts.Repo}
	if _, err := g.TopLevel(ctx); err != nil {
		return err
	}
	sha, err := g.RevParse(ctx, opts.Rev)
	if err != nil {
		return err
	}
	cfgRev := opts.ConfigRev
	if cfgRev == "" {
		cfgRev = sha
	}
	cfgSHA, err := g.RevParse(ctx, cfgRev)
	if err != nil {
		return err
	}
	raw, err := g.Show(ctx, cfgSHA, cfgPath)
	if err != nil {
		if flakegate.ErrorCode(err) == flakegate.ENOTFOUND {
			return &flakegate.Error{Code: flakegate.EINVALID, Op: "replay", Path: cfgPath,
				Message: "no such file at " + flakegate.ShortSHA(cfgSHA), Hint: "pass --config-rev with the revision that holds the config (check uses the base)"}
		}
		return err
	}
	cfg, err := config.Load(raw, cfgPath)
	if err != nil {
		return err
	}
	var p *config.Property
	var ids []string
	for i := range cfg.Properties {
		q := &cfg.Properties[i]
		ids = append(ids, q.ID())
		if q.Path == prop && q.Name == opts.Name {
			p = q
		}
	}
	if p == nil {
		return &flakegate.Error{Code: flakegate.EINVALID, Op: "replay", Path: cfgPath,
			Message: fmt.Sprintf("no property %s at %s", (&config.Property{Path: prop, Name: opts.Name}).ID(), flakegate.ShortSHA(cfgSHA)),
			Hint:    "the config names: " + strings.Join(ids, ", ")}
	}
	argv, err := runner.Expand(p.Run, runner.Vars{Path: p.Path, Name: p.Name, Seed: seed.String(), Samples: strconv.Itoa(p.Samples), Fixture: p.Fixture})
	if err != nil {
		return err
	}
	argv = runner.EvidenceArgv(argv)

	tmp, err := os.MkdirTemp("", "flakegate-replay-")
	if err != nil {
		return &flakegate.Error{Code: flakegate.EINTERNAL, Op: "replay", Message: "cannot create a temporary folder", Err: err}
	}
	dir := filepath.Join(tmp, "checkout")
	removed := false
	remove := func() {
		// The checkout is ours alone: unregister it and delete it.
		if removed {
			return
		}
		removed = true
		if err := g.RemoveWorktree(context.WithoutCancel(ctx), dir); err != nil {
			fmt.Fprintf(opts.IO.ErrOut, "replay: note: could not remove the worktree %s: %v\n", dir, termsafe.Line(err.Error()))
		}
		os.RemoveAll(tmp)
	}
	defer remove()
	if err := g.PrepareWorktree(ctx, dir, sha); err != nil {
		return err
	}
	fmt.Fprintf(opts.IO.ErrOut, "replay: %s seed %s at %s (command from %s:%s)\n", termsafe.Line(p.ID()), seed.String(), flakegate.ShortSHA(sha), flakegate.ShortSHA(cfgSHA), termsafe.Line(cfgPath))
	if p.Fixture != "" {
		sum, err := digest.Path(ctx, filepath.Join(dir, filepath.FromSlash(p.Fixture)))
		if err != nil {
			return replayIncomplete(opts, fmt.Sprintf("cannot digest fixture %s at %s: %v", p.Fixture, flakegate.ShortSHA(sha), err))
		}
		fmt.Fprintf(opts.IO.ErrOut, "replay: fixture %s sha256 %s\n", termsafe.Line(p.Fixture), sum)
	}
	sb, env, err := opts.isolation(ctx, dir, &cfg.Sandbox)
	if err != nil {
		return err
	}
	out := startOutput(opts.IO.Out, argv)
	cmd := runner.Command{Argv: argv, Dir: dir, Env: env, WallBudget: p.WallBudget, Output: out, Sandbox: sb}
	ev := runner.NewEvidence(runner.DetectFramework(p.Run), p.Name, p.PassMarker, p.FailMarker)
	if ev != nil {
		// The evidence reads the exact bytes; the console gets the rendering.
		cmd.Output = teeWriter{out, ev}
	}
	o := runner.Run(ctx, cmd)
	endOutput(opts.IO.Out, out, o)
	ev.Judge(&o)
	remove() // before the outcome, so that the outcome is the last line
	return replayOutcome(opts, argv, o)
}

// teeWriter writes to both; an error of the first stops nothing.
type teeWriter struct {
	a interface{ Write([]byte) (int, error) }
	b *runner.Evidence
}

func (t teeWriter) Write(p []byte) (int, error) {
	t.a.Write(p) //nolint:errcheck // the console's error must not end the attempt
	return t.b.Write(p)
}
