package grade

import (
	"encoding/json"
	"testing"
)

// lockOf is an npm lock file (version 3) of the packages given by
// folder; "" is the root package.
func lockOf(t *testing.T, pkgs map[string]npmEntry) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{"name": "app", "lockfileVersion": 3, "packages": pkgs})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestTestToolingChanged: a lock file counts as changing what grades a
// vitest or jest test only where it changes the framework, a development
// dependency of the root package, or what those need (node's
// resolution, nested copies included); a product dependency the patch
// adds or bumps does not count.
func TestTestToolingChanged(t *testing.T) {
	base := func() map[string]npmEntry {
		return map[string]npmEntry{
			"": {Name: "app", Dependencies: map[string]string{"left-pad": "^1"},
				Dev: map[string]string{"vitest": "^3", "@testing-library/dom": "^9"}},
			"node_modules/vitest":                                  {Version: "3.2.4", Integrity: "sha512-v", Dependencies: map[string]string{"chai": "^5", "tinyspy": "^4"}},
			"node_modules/chai":                                    {Version: "5.2.0", Integrity: "sha512-c", Dependencies: map[string]string{"loupe": "^3"}},
			"node_modules/loupe":                                   {Version: "3.1.0", Integrity: "sha512-l"},
			"node_modules/tinyspy":                                 {Version: "4.0.0", Integrity: "sha512-t"},
			"node_modules/@testing-library/dom":                    {Version: "9.3.0", Integrity: "sha512-d", Dependencies: map[string]string{"loupe": "^2"}},
			"node_modules/@testing-library/dom/node_modules/loupe": {Version: "2.3.7", Integrity: "sha512-l2"},
			"node_modules/left-pad":                                {Version: "1.3.0", Integrity: "sha512-p"},
		}
	}
	type testCase struct {
		name string
		edit func(m map[string]npmEntry)
		want bool
	}
	run := func(t *testing.T, tc testCase) {
		b := base()
		c := base()
		tc.edit(c)
		if got := TestToolingChanged("package-lock.json", lockOf(t, b), lockOf(t, c)); got != tc.want {
			t.Errorf("changed = %v, want %v", got, tc.want)
		}
	}
	for _, tc := range []testCase{
		{"nothing", func(map[string]npmEntry) {}, false},
		{"a product dependency bumped", func(m map[string]npmEntry) {
			m["node_modules/left-pad"] = npmEntry{Version: "1.3.1", Integrity: "sha512-p2"}
		}, false},
		{"a product dependency added", func(m map[string]npmEntry) {
			r := m[""]
			r.Dependencies = map[string]string{"left-pad": "^1", "ms": "^2"}
			m[""] = r
			m["node_modules/ms"] = npmEntry{Version: "2.1.3", Integrity: "sha512-m"}
		}, false},
		{"vitest aliased to another package", func(m map[string]npmEntry) {
			m["node_modules/vitest"] = npmEntry{Name: "evil-vitest", Version: "3.2.4", Resolved: "https://registry.npmjs.org/evil-vitest/-/evil-vitest-3.2.4.tgz",
				Integrity: "sha512-e", Dependencies: map[string]string{"chai": "^5", "tinyspy": "^4"}}
		}, true},
		{"chai (vitest's assertions) from a tarball", func(m map[string]npmEntry) {
			m["node_modules/chai"] = npmEntry{Version: "5.2.0", Resolved: "https://example.com/chai.tgz", Integrity: "sha512-x", Dependencies: map[string]string{"loupe": "^3"}}
		}, true},
		{"a transitive dependency of the framework", func(m map[string]npmEntry) {
			m["node_modules/loupe"] = npmEntry{Version: "3.1.1", Integrity: "sha512-l3"}
		}, true},
		{"a nested copy a dev dependency resolves to", func(m map[string]npmEntry) {
			m["node_modules/@testing-library/dom/node_modules/loupe"] = npmEntry{Version: "2.3.8", Integrity: "sha512-l4"}
		}, true},
		{"a nested copy put in front of the framework's dependency", func(m map[string]npmEntry) {
			m["node_modules/vitest/node_modules/chai"] = npmEntry{Version: "5.2.0", Integrity: "sha512-forged"}
		}, true},
		{"a development dependency added", func(m map[string]npmEntry) {
			r := m[""]
			r.Dev = map[string]string{"vitest": "^3", "@testing-library/dom": "^9", "typescript": "^5"}
			m[""] = r
			m["node_modules/typescript"] = npmEntry{Version: "5.4.0", Integrity: "sha512-ts"}
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
	// What it cannot read the npm way counts whenever its bytes differ.
	if !TestToolingChanged("yarn.lock", []byte("a"), []byte("b")) || TestToolingChanged("yarn.lock", []byte("a"), []byte("a")) {
		t.Error("yarn.lock: any change must count, and only a change")
	}
	if !TestToolingChanged("package-lock.json", []byte(`{"lockfileVersion":1}`), []byte(`{"lockfileVersion":1,"x":1}`)) {
		t.Error("an npm lock of version 1 changed: must count")
	}
}
