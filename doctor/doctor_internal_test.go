package doctor

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/flakegate/flakegate/config"
)

// TestDoctorToolchains: the programs doctor looks up for a config: each
// argv[0], what env runs, and the interpreters a sh -c script names;
// scripts of the tree are not toolchains.
func TestDoctorToolchains(t *testing.T) {
	type testCase struct {
		name string
		yaml string
		want []string // prog@where, "!" when it is a command's argv[0]
	}
	run := func(t *testing.T, tc testCase) {
		cfg, err := config.Load([]byte(tc.yaml), "flakegate.yaml")
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, tl := range toolchains(cfg) {
			s := tl.Prog + "@" + tl.Where
			if tl.Direct {
				s += "!"
			}
			got = append(got, s)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("toolchains %q, want %q", got, tc.want)
		}
	}
	prop := func(run string) string {
		return "version: 1\nproperties:\n  - {path: t.py, seeds: [1], run: " + run + ", wall_budget: 10s}\n"
	}
	for _, tc := range []testCase{
		{"argv[0]", prop(`[python3, -m, pytest, "{path}"]`), []string{"python3@properties[0].run!"}},
		{"env then the program", prop(`[env, -u, HOME, PYTHONHASHSEED=0, python, "{path}"]`), []string{"env@properties[0].run!", "python@properties[0].run!"}},
		{"sh -c names interpreters", prop(`[sh, -c, "cd sub && node x.js {seed}; /usr/bin/python3 -c 'pass' | go vet"]`),
			[]string{"sh@properties[0].run!", "node@properties[0].run", "/usr/bin/python3@properties[0].run", "go@properties[0].run"}},
		{"a script of the tree is skipped", prop(`[./run.sh, "{seed}"]`), nil},
		{"prepare, and one program once", "version: 1\nprepare: {run: [npm, ci]}\nproperties:\n" +
			"  - {path: a.js, seeds: [1], run: [npx, vitest, run, \"{path}\"], wall_budget: 10s}\n" +
			"  - {path: b.js, seeds: [1], run: [npx, vitest, run, \"{path}\"], wall_budget: 10s, prepare: {run: [sh, -c, \"npm ci\"]}}\n",
			[]string{"npm@prepare!", "npx@properties[0].run!", "sh@properties[1].prepare!"}},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestUsernsBlockers: AppArmor's restriction (Ubuntu 24.04) and disabled
// user namespaces are named from /proc/sys; a host without them names none.
func TestUsernsBlockers(t *testing.T) {
	root := t.TempDir()
	write := func(p, v string) {
		p = filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got := usernsBlockers(root); len(got) != 0 {
		t.Errorf("no /proc/sys files: %q, want none", got)
	}
	write("proc/sys/kernel/apparmor_restrict_unprivileged_userns", "0")
	write("proc/sys/user/max_user_namespaces", "15000")
	if got := usernsBlockers(root); len(got) != 0 {
		t.Errorf("nothing restricted: %q, want none", got)
	}
	write("proc/sys/kernel/apparmor_restrict_unprivileged_userns", "1")
	write("proc/sys/user/max_user_namespaces", "0")
	got := usernsBlockers(root)
	if len(got) != 2 || !strings.Contains(got[0], "AppArmor") || !strings.Contains(got[0], "apparmor_restrict_unprivileged_userns = 1") ||
		!strings.Contains(got[1], "max_user_namespaces = 0") {
		t.Errorf("restricted: %q", got)
	}
}
