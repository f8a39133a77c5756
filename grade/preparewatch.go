// What a prepare wrote to its tree, against what the triples are graded
// on. The attempts read the tree through the prepared layer, so a
// prepare that rewrites the property file, the generator, a fixture or
// any watched file would have the attempts grade files the record does
// not name. Two rules keep the record honest:
//
//   - the fixture digests are those of the tree the attempts see: a
//     fixture the candidate's prepare rewrote differs from the base's,
//     and the table says FIXTURE (a green score on rewritten fixture
//     bytes does not transfer);
//   - any other watched path the candidate's prepare wrote (or deleted)
//     makes the triple CONTAMINATED: the patch edited test
//     infrastructure, at build time instead of in the diff. The path goes
//     into the record's diff_paths and watch_paths, so the table itself
//     says CONTAMINATED and names it. A base whose prepare writes a
//     watched path is INCOMPLETE: its attempts would not read what the
//     record names either.

package grade

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/digest"
	"github.com/flakegate/flakegate/grade/infra"
	"github.com/flakegate/flakegate/internal/diskfull"
	"github.com/flakegate/flakegate/transcript"
)

// LayerEntry is one path a prepare wrote to its tree: a file, link or
// other non-folder (written), a whiteout (deleted), or a folder that
// hides what the tree holds below it (opaque, or redirected).
type LayerEntry struct {
	Path string // slash-separated, relative to the tree
	Kind string // "written", "deleted", "hides"
}

// LayerWrites lists what the prepared layer whose upper tree is root
// wrote to its tree.
func LayerWrites(root string) ([]LayerEntry, error) {
	var out []LayerEntry
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == root {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if xattrIs(p, "trusted.overlay.opaque") || xattrIs(p, "trusted.overlay.redirect") {
				out = append(out, LayerEntry{rel, "hides"})
			}
			return nil
		}
		kind := "written"
		if d.Type()&os.ModeCharDevice != 0 {
			var st unix.Stat_t
			if unix.Lstat(p, &st) == nil && st.Rdev == 0 {
				kind = "deleted"
			}
		}
		out = append(out, LayerEntry{rel, kind})
		return nil
	})
	if err != nil {
		return nil, diskfull.Error(err, root, "cannot read the prepared layer")
	}
	return out, nil
}

// xattrIs says whether p (not followed) has the extended attribute name.
func xattrIs(p, name string) bool {
	_, err := unix.Lgetxattr(p, name, nil)
	return err == nil
}

// Prepared is what one side's prepare left: what its layer wrote
// (LayerWrites) and the layer's upper tree, where a fixture it rewrote
// is read.
type Prepared struct {
	Side  string // transcript.SideCandidate or transcript.SideBase
	Wrote []LayerEntry
	Tree  string
}

// PrepareWatch is what the prepares of one property did to what it is
// graded on.
type PrepareWatch struct {
	CandWrote   []string // watched paths the candidate's prepare wrote
	BaseWrote   []string // the same for the base's
	CandFixture string   // the fixture digest the candidate's attempts see ("" : the committed one)
	BaseFixture string
	FixtureWhy  string // which prepare rewrote the fixture, for the reason
}

// PrepareHits compares what the prepares of p wrote (sides: the ones
// that ran and succeeded, candidate first) with what p is graded on:
// the config's and ledger's paths (the grader's Watch), p's watched
// paths and its globs.
func (g *Grader) PrepareHits(ctx context.Context, p *config.Property, sides []Prepared) (*PrepareWatch, error) {
	pw := &PrepareWatch{}
	globs, err := g.PropGlobs(ctx, p)
	if err != nil {
		return nil, err
	}
	files, err := g.Finder.Files(ctx)
	if err != nil {
		return nil, err
	}
	exact := append(p.WatchPaths(), g.Watch...)
	for _, pt := range sides {
		var hits []string
		fixtureTouched := false
		for _, e := range pt.Wrote {
			if p.Fixture != "" && touches(e.Path, p.Fixture) {
				fixtureTouched = true
				continue
			}
			under := []string{e.Path}
			if e.Kind != "written" { // a deleted or hiding folder: every base file below it
				for f := range files {
					if strings.HasPrefix(f, e.Path+"/") {
						under = append(under, f)
					}
				}
			}
			if hit := watchedAmong(under, exact, globs); hit != "" {
				hits = append(hits, hit)
			}
		}
		sort.Strings(hits)
		if fixtureTouched {
			pw.fixtureTouched(ctx, pt, p.Fixture)
		}
		if pt.Side == transcript.SideCandidate {
			pw.CandWrote = hits
		} else {
			pw.BaseWrote = hits
		}
	}
	return pw, nil
}

// fixtureTouched notes that the prepare of pt rewrote fixture: the
// digest its attempts see, and why.
func (pw *PrepareWatch) fixtureTouched(ctx context.Context, pt Prepared, fixture string) {
	sum := seenFixture(ctx, pt, fixture)
	if sum == "" {
		sum = "rewritten by the " + pt.Side + "'s prepare"
	}
	if pw.FixtureWhy != "" {
		pw.FixtureWhy += "; "
	}
	pw.FixtureWhy += "the " + pt.Side + "'s prepare rewrote the fixture " + fixture
	if pt.Side == transcript.SideCandidate {
		pw.CandFixture = sum
	} else {
		pw.BaseFixture = sum
	}
}

// touches says whether a write at e changes what the attempts see at f:
// f itself, a folder above it, or a path below it.
func touches(e, f string) bool {
	f = path.Clean(f)
	return e == f || strings.HasPrefix(f, e+"/") || strings.HasPrefix(e, f+"/")
}

// watchedAmong returns the first of paths that a watched path or glob
// names, "" for none.
func watchedAmong(paths, exact []string, globs []infra.Watch) string {
	for _, p := range paths {
		if hit := InDiff([]string{p}, exact); len(hit) > 0 {
			return p
		}
		for _, g := range globs {
			if config.MatchGlob(g.Glob, p) {
				return p
			}
		}
	}
	return ""
}

// seenFixture is the digest of the fixture the attempts see through pt
// when the prepare replaced it with a regular file and touched nothing
// else of it; "" when the view is anything else (a folder it changed, a
// link, a deletion), which is then named by a text that equals no digest.
func seenFixture(ctx context.Context, pt Prepared, fixture string) string {
	f := path.Clean(fixture)
	for _, e := range pt.Wrote {
		if touches(e.Path, f) && (e.Path != f || e.Kind != "written") {
			return ""
		}
	}
	fp := filepath.Join(pt.Tree, filepath.FromSlash(f))
	fi, err := os.Lstat(fp)
	if err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	sum, err := digest.Path(ctx, fp)
	if err != nil {
		return ""
	}
	return sum
}

// Fixtures are the fixture digests the attempts see, on the candidate
// and on base, given the committed ones: those unless a prepare rewrote
// the fixture (pw nil: before the prepares ran).
func (pw *PrepareWatch) Fixtures(cand, base string) (string, string) {
	if pw != nil {
		if pw.CandFixture != "" {
			cand = pw.CandFixture
		}
		if pw.BaseFixture != "" {
			base = pw.BaseFixture
		}
	}
	return cand, base
}

// BaseWroteWhy says why the base's prepare makes the property's triples
// INCOMPLETE: it wrote a watched path ("" when it did not, or pw is nil).
func (pw *PrepareWatch) BaseWroteWhy() string {
	if pw != nil && len(pw.BaseWrote) > 0 {
		return fmt.Sprintf("base prepare wrote watched test infrastructure (%s): the base's attempts would not read what the record names", strings.Join(pw.BaseWrote, ", "))
	}
	return ""
}
