package grade

import (
	"encoding/json"
	"maps"
	"path"
	"slices"
	"strings"
)

// A vitest or jest scope whose node_modules a prepare installs (npm ci)
// gets the framework the candidate's lock file names: a patch that
// points vitest, jest or an assertion library at a package of its own
// (an alias to another name, a tarball, another version) would grade
// itself with it. The lock file stays the candidate's (its other
// entries are the patch's dependencies), and it is watched: a change
// counts only when it changes the locked packages of the test tooling.

// LockFiles are the lock files a prepare installs node_modules from,
// watched for a vitest or jest test.
var LockFiles = []string{"package-lock.json", "npm-shrinkwrap.json", "yarn.lock", "pnpm-lock.yaml"}

// TestToolingChanged reports whether the lock file f changes, between
// base and cand, a package the tests run with: the framework (vitest,
// jest), every development dependency of the root package (assertion
// and mocking libraries, TypeScript, transformers: what decides how a
// test compiles and what its assertions mean) and everything those
// need, as node resolves them from the lock's "packages" (npm's lock
// files of version 2 and 3). A lock file it cannot read that way (yarn,
// pnpm, npm's version 1, or bytes that are not such a lock) counts as
// changed whenever its bytes differ.
func TestToolingChanged(f string, base, cand []byte) bool {
	switch path.Base(f) {
	case "package-lock.json", "npm-shrinkwrap.json":
	default:
		return string(base) != string(cand)
	}
	b, okB := parseNPMLock(base)
	c, okC := parseNPMLock(cand)
	if !okB || !okC {
		return string(base) != string(cand)
	}
	roots := append(b.roots(), c.roots()...)
	wantB, wantC := b.closure(roots), c.closure(roots)
	if len(wantB) != len(wantC) {
		return true
	}
	for p, e := range wantB {
		if o, ok := wantC[p]; !ok || o != e {
			return true
		}
	}
	return false
}

// npmLock is the part of an npm lock file (version 2 or 3) that says
// which package sits where.
type npmLock struct {
	packages map[string]npmEntry
	root     npmEntry
}

// npmEntry is one package of the lock's "packages", by its folder.
type npmEntry struct {
	Version      string            `json:"version"`
	Resolved     string            `json:"resolved"`
	Integrity    string            `json:"integrity"`
	Link         bool              `json:"link"`
	Name         string            `json:"name"`
	Dependencies map[string]string `json:"dependencies"`
	Optional     map[string]string `json:"optionalDependencies"`
	Peer         map[string]string `json:"peerDependencies"`
	Dev          map[string]string `json:"devDependencies"`
}

// key is what makes two locked copies of a package the same.
func (e npmEntry) key() string {
	return e.Name + "\x00" + e.Version + "\x00" + e.Resolved + "\x00" + e.Integrity + "\x00" + map[bool]string{true: "link"}[e.Link]
}

func parseNPMLock(src []byte) (*npmLock, bool) {
	var raw struct {
		LockfileVersion int                 `json:"lockfileVersion"`
		Packages        map[string]npmEntry `json:"packages"`
	}
	if err := json.Unmarshal(src, &raw); err != nil || raw.LockfileVersion < 2 || raw.Packages == nil {
		return nil, false
	}
	return &npmLock{packages: raw.Packages, root: raw.Packages[""]}, true
}

// roots are the names the tests run with: the frameworks, and the root
// package's development dependencies.
func (l *npmLock) roots() []string {
	names := []string{"vitest", "jest"}
	for n := range l.root.Dev {
		names = append(names, n)
	}
	return names
}

// closure is every locked package the roots reach, by folder, with the
// key of what is locked there.
func (l *npmLock) closure(roots []string) map[string]string {
	out := map[string]string{}
	var visit func(from, name string)
	visit = func(from, name string) {
		at, ok := l.resolve(from, name)
		if !ok {
			return
		}
		if _, seen := out[at]; seen {
			return
		}
		e := l.packages[at]
		out[at] = e.key()
		if e.Link && e.Resolved != "" {
			// A workspace link: the package is the folder it names.
			if t, ok := l.packages[e.Resolved]; ok {
				out[e.Resolved] = t.key()
				l.visitDeps(e.Resolved, t, visit)
			}
			return
		}
		l.visitDeps(at, e, visit)
	}
	for _, r := range slices.Compact(slices.Sorted(slices.Values(roots))) {
		visit("", r)
	}
	return out
}

func (l *npmLock) visitDeps(at string, e npmEntry, visit func(from, name string)) {
	for _, deps := range []map[string]string{e.Dependencies, e.Optional, e.Peer} {
		for _, n := range slices.Sorted(maps.Keys(deps)) {
			visit(at, n)
		}
	}
}

// resolve finds the folder of package name required from folder from,
// as node does: from's own node_modules, then each folder above it.
func (l *npmLock) resolve(from, name string) (string, bool) {
	for dir := from; ; {
		cand := "node_modules/" + name
		if dir != "" {
			cand = dir + "/node_modules/" + name
		}
		if _, ok := l.packages[cand]; ok {
			return cand, true
		}
		if dir == "" {
			return "", false
		}
		i := strings.LastIndex(dir, "/node_modules/")
		if i < 0 {
			dir = ""
		} else {
			dir = dir[:i]
		}
	}
}
