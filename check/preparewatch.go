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

package check

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
	"github.com/flakegate/flakegate/internal/diskfull"
	"github.com/flakegate/flakegate/transcript"
)

// layerEntry is one path a prepare wrote to its tree: a file, link or
// other non-folder (written), a whiteout (deleted), or a folder that
// hides what the tree holds below it (opaque, or redirected).
type layerEntry struct {
	path string // slash-separated, relative to the tree
	kind string // "written", "deleted", "hides"
}

// layerWrites lists what the prepared layer pt wrote to its tree.
func (c *site) layerWrites(pt *preparedTree) error {
	root := filepath.Join(pt.dir, "tree")
	var out []layerEntry
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
				out = append(out, layerEntry{rel, "hides"})
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
		out = append(out, layerEntry{rel, kind})
		return nil
	})
	if err != nil {
		return diskfull.Error(err, root, "cannot read the prepared layer")
	}
	pt.wrote = out
	return nil
}

// xattrIs says whether p (not followed) has the extended attribute name.
func xattrIs(p, name string) bool {
	_, err := unix.Lgetxattr(p, name, nil)
	return err == nil
}

// prepWatch is what the prepares of one property did to what it is graded
// on.
type prepWatch struct {
	candWrote   []string // watched paths the candidate's prepare wrote
	baseWrote   []string // the same for the base's
	candFixture string   // the fixture digest the candidate's attempts see ("" : the committed one)
	baseFixture string
	fixtureWhy  string // which prepare rewrote the fixture, for the reason
}

// watchPrepares compares what the prepares of ps wrote with what ps is
// graded on, once per property (under prepareMu).
func (c *checker) watchPrepares(ctx context.Context, ps *propState) error {
	if c.preparedWatch(ps) != nil {
		return nil
	}
	pw := &prepWatch{}
	p := ps.prop
	globs, err := c.propGlobs(ctx, p)
	if err != nil {
		return err
	}
	files, err := c.infra().Files(ctx)
	if err != nil {
		return err
	}
	exact := append(p.WatchPaths(), c.watch...)
	for _, side := range []string{transcript.SideCandidate, transcript.SideBase} {
		pt := c.preparedFor(ps, side)
		if pt == nil || !pt.ok {
			continue
		}
		var hits []string
		fixtureTouched := false
		for _, e := range pt.wrote {
			if p.Fixture != "" && touches(e.path, p.Fixture) {
				fixtureTouched = true
				continue
			}
			under := []string{e.path}
			if e.kind != "written" { // a deleted or hiding folder: every base file below it
				for f := range files {
					if strings.HasPrefix(f, e.path+"/") {
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
			sum := c.seenFixture(ctx, pt, p)
			if sum == "" {
				sum = "rewritten by the " + side + "'s prepare"
			}
			if pw.fixtureWhy != "" {
				pw.fixtureWhy += "; "
			}
			pw.fixtureWhy += "the " + side + "'s prepare rewrote the fixture " + p.Fixture
			if side == transcript.SideCandidate {
				pw.candFixture = sum
			} else {
				pw.baseFixture = sum
			}
		}
		if side == transcript.SideCandidate {
			pw.candWrote = hits
		} else {
			pw.baseWrote = hits
		}
	}
	c.prepWatchMu.Lock()
	c.prepWatch[ps.index] = pw
	c.prepWatchMu.Unlock()
	return nil
}

// touches says whether a write at e changes what the attempts see at f:
// f itself, a folder above it, or a path below it.
func touches(e, f string) bool {
	f = path.Clean(f)
	return e == f || strings.HasPrefix(f, e+"/") || strings.HasPrefix(e, f+"/")
}

// watchedAmong returns the first of paths that a watched path or glob
// names, "" for none.
func watchedAmong(paths, exact []string, globs []watchGlob) string {
	for _, p := range paths {
		if hit := inDiff([]string{p}, exact); len(hit) > 0 {
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
func (c *checker) seenFixture(ctx context.Context, pt *preparedTree, p *config.Property) string {
	f := path.Clean(p.Fixture)
	for _, e := range pt.wrote {
		if touches(e.path, f) && (e.path != f || e.kind != "written") {
			return ""
		}
	}
	fp := filepath.Join(pt.dir, "tree", filepath.FromSlash(f))
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

// preparedWatch is what the prepares of ps did, nil before they ran.
func (c *checker) preparedWatch(ps *propState) *prepWatch {
	c.prepWatchMu.Lock()
	defer c.prepWatchMu.Unlock()
	return c.prepWatch[ps.index]
}

// fixtureDigests are the fixture digests the attempts of ps see, on the
// candidate and on base: the committed ones unless a prepare rewrote the
// fixture.
func (c *checker) fixtureDigests(ps *propState) (cand, base string) {
	cand, base = ps.candFixtureSHA256, ps.baseFixtureSHA256
	if pw := c.preparedWatch(ps); pw != nil {
		if pw.candFixture != "" {
			cand = pw.candFixture
		}
		if pw.baseFixture != "" {
			base = pw.baseFixture
		}
	}
	return cand, base
}

// prepareWrote lists the watched paths the candidate's prepare of ps
// wrote (nil when none, or before it ran).
func (c *checker) prepareWrote(ps *propState) []string {
	if pw := c.preparedWatch(ps); pw != nil {
		return pw.candWrote
	}
	return nil
}

// basePrepareWrote says why the base's prepare of ps makes its triples
// INCOMPLETE: it wrote a watched path ("" when it did not).
func (c *checker) basePrepareWrote(ps *propState) string {
	if pw := c.preparedWatch(ps); pw != nil && len(pw.baseWrote) > 0 {
		return fmt.Sprintf("base prepare wrote watched test infrastructure (%s): the base's attempts would not read what the record names", strings.Join(pw.baseWrote, ", "))
	}
	return ""
}
