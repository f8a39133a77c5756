package site

import (
	"context"

	"github.com/flakegate/flakegate/git"
	"github.com/flakegate/flakegate/gocache"
)

// SetupGoCaches gives iso's sandbox the repository's Go caches for the
// base commit (gocache.Open): none (nil) unless the attempts are
// sandboxed. get is flakegate's own environment (the runner's module
// cache, the user's cache folder, GOPROXY).
func SetupGoCaches(ctx context.Context, g *git.Client, common, base string, iso *Isolation, get func(string) (string, bool)) (*gocache.Caches, error) {
	if iso.Mode != IsolationBwrap {
		return nil, nil
	}
	gc, err := gocache.Open(ctx, gocache.Options{Git: g, Common: common, Base: base, Env: iso.Env, Get: get, Op: iso.Spec.Op})
	if gc == nil || err != nil {
		return nil, err
	}
	iso.Sandbox.GoCache, iso.Sandbox.GoModCache = gc.BuildDir(), gc.ModDir()
	return gc, nil
}
