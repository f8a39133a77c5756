// The graded tree: the candidate's code with the base's version of what
// decides what its tests check and how they run (Build has the rules by
// framework), made a commit (git.Client.Overlay) that check's candidate
// trees and a replay's checkout hold.

package grade

import (
	"context"
	"path"
	"strings"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/git"
	"github.com/flakegate/flakegate/grade/infra"
)

// Graded is a check's graded candidate.
type Graded struct {
	Plan *Plan
	SHA  string // the commit the candidate's trees check out
	// Patch are the paths the Patch changes (base to candidate); taken
	// those of its edits the graded tree takes back.
	Patch []string
	Taken []Edit
}

// MakeGraded builds the graded candidate of cand over base for cfg:
// keep are paths that stay the candidate's besides the config's fixtures
// and generators (the config, an in-repository ledger).
func MakeGraded(ctx context.Context, g *git.Client, cfg *config.Config, base, cand string, keep []string) (*Graded, error) {
	fail := func(err error) (*Graded, error) {
		if flakegate.ErrorCode(err) == flakegate.EINVALID || ctx.Err() != nil {
			return nil, err
		}
		return nil, &flakegate.Error{Code: flakegate.EINTERNAL, Op: "check", Message: "cannot lay the base's tests over the candidate", Err: err}
	}
	patch, err := g.DiffNames(ctx, base, cand)
	if err != nil {
		return fail(err)
	}
	in := Input{Keep: keep, Diff: patch}
	for side, rev := range map[*Tree]string{&in.Base: base, &in.Cand: cand} {
		files, err := g.ListFiles(ctx, rev)
		if err != nil {
			return fail(err)
		}
		side.Files = map[string]bool{}
		for _, f := range files {
			side.Files[f] = true
		}
		side.Read = func(ctx context.Context, paths []string) (map[string][]byte, error) {
			return g.ShowFiles(ctx, rev, paths)
		}
	}
	finder := infra.New(g, base)
	for i := range cfg.Suites {
		s := &cfg.Suites[i]
		in.Scopes = append(in.Scopes, Scope{Framework: s.Framework, Path: s.Path})
		if s.FixtureRoot != "" {
			in.Keep = append(in.Keep, s.FixtureRoot)
		}
		if isJS(s.Framework) {
			probe := path.Join(s.Path, "flakegate.test.js")
			if in.Base.Files[s.Path] {
				probe = s.Path
			}
			setup, err := jsSetupFiles(ctx, finder, &config.Property{Path: probe, Framework: s.Framework}, in.Base.Files)
			if err != nil {
				return fail(err)
			}
			in.Setup = append(in.Setup, setup...)
		}
	}
	for i := range cfg.Properties {
		p := &cfg.Properties[i]
		in.Scopes = append(in.Scopes, Scope{Framework: p.Framework, Path: p.Path, Property: true})
		for _, k := range []string{p.Fixture, p.Generator} {
			if k != "" {
				in.Keep = append(in.Keep, k)
			}
		}
		if isJS(p.Framework) {
			setup, err := jsSetupFiles(ctx, finder, p, in.Base.Files)
			if err != nil {
				return fail(err)
			}
			in.Setup = append(in.Setup, setup...)
		}
	}
	plan, err := Build(ctx, in)
	if err != nil {
		return fail(err)
	}
	writes := make([]git.OverlayFile, len(plan.Write))
	for i, w := range plan.Write {
		writes[i] = git.OverlayFile{Path: w.Path, Data: w.Data}
	}
	sha, err := g.Overlay(ctx, base, cand, plan.Pick, writes)
	if err != nil {
		return fail(err)
	}
	taken := plan.TakenBack(patch, func(f string) bool { return in.Base.Files[f] })
	return &Graded{Plan: plan, SHA: sha, Patch: patch, Taken: taken}, nil
}

// jsSetupFiles are the setup files the base's vitest or jest config
// names for p (grade/infra reads the config): files of the base.
func jsSetupFiles(ctx context.Context, finder *infra.Finder, p *config.Property, base map[string]bool) ([]string, error) {
	found, err := finder.Find(ctx, p)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, w := range found {
		for _, key := range []string{"setupFiles ", "setupFilesAfterEnv ", "globalSetup ", "globalTeardown "} {
			if strings.HasPrefix(w.Why, key) && base[w.Glob] {
				out = append(out, w.Glob)
			}
		}
	}
	return out, nil
}

// EditsFor are the patch's edits, taken back by the graded tree, that
// grade the test of p: its file's, and its world's (Plan.EditsFor).
func (gt *Graded) EditsFor(p *config.Property) []Edit {
	if gt == nil {
		return nil
	}
	return gt.Plan.EditsFor(p.Framework, p.Path, gt.Taken)
}

// isJS reports whether framework is jest or vitest.
func isJS(framework string) bool {
	return framework == config.FrameworkJest || framework == config.FrameworkVitest
}
