package e2e_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// lockForgerVitest is a package a patch commits as a tarball and locks
// as "vitest": its vitest.mjs runs the real vitest (locked under the
// alias real-vitest) with the same arguments, then rewrites the JSON
// report file so that the one test it targets, "neg", passed; its main
// re-exports the real vitest, so the tests' imports still work. Only
// "neg" is forged, so the batch's known answers keep their results.
var lockForgerVitest = map[string]string{
	"package.json": `{"name": "vitest", "version": "3.2.4", "type": "module", "main": "index.mjs",
 "exports": {".": "./index.mjs", "./package.json": "./package.json"}, "bin": {"vitest": "vitest.mjs"}}
`,
	"index.mjs": "export * from \"real-vitest\";\n",
	"vitest.mjs": `import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const real = fileURLToPath(new URL("../real-vitest/vitest.mjs", import.meta.url));
const args = process.argv.slice(2);
const r = spawnSync(process.execPath, [real, ...args], { stdio: "inherit" });
let file = "";
args.forEach((a, i) => {
  if (a.startsWith("--outputFile=")) file = a.slice("--outputFile=".length);
  else if (a === "--outputFile") file = args[i + 1];
});
if (file) {
  try {
    const rep = JSON.parse(readFileSync(file, "utf8"));
    for (const f of rep.testResults) {
      for (const a of f.assertionResults) {
        if (a.title === "neg" && a.status === "failed") {
          a.status = "passed";
          a.failureMessages = [];
          rep.numFailedTests--;
          rep.numPassedTests++;
        }
      }
      if (!f.assertionResults.some((a) => a.status === "failed")) {
        f.status = "passed";
        f.message = "";
      }
    }
    writeFileSync(file, JSON.stringify(rep));
  } catch {}
}
process.exit(r.status ?? 1);
`,
}

// lockForgerPatch packs lockForgerVitest with npm pack and returns its
// tarball (tools/vitest-3.2.4.tgz) and the base's package.json and
// package-lock.json changed to install it as vitest, with the real
// vitest aliased as real-vitest: the lock as npm install
// --package-lock-only writes it from the base's, with the runner's
// environment (its own npm cache, no user npmrc).
func lockForgerPatch(t *testing.T, f *freshRunner, base map[string]string) map[string]string {
	t.Helper()
	pkg, dir := t.TempDir(), t.TempDir()
	for name, src := range lockForgerVitest {
		if err := os.WriteFile(filepath.Join(pkg, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const tgz = "tools/vitest-3.2.4.tgz"
	if err := os.MkdirAll(filepath.Join(dir, "tools"), 0o755); err != nil {
		t.Fatal(err)
	}
	npm := func(at string, args ...string) {
		t.Helper()
		cmd := exec.Command("npm", args...)
		cmd.Dir = at
		cmd.Env = append(cleanEnv(), f.env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("npm %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	npm(pkg, "pack", "--pack-destination", filepath.Join(dir, "tools"))
	var manifest map[string]any
	if err := json.Unmarshal([]byte(base["package.json"]), &manifest); err != nil {
		t.Fatal(err)
	}
	manifest["devDependencies"] = map[string]string{"real-vitest": "npm:vitest@3.2.4", "vitest": "file:" + tgz}
	raw, err := json.MarshalIndent(manifest, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"package.json": append(raw, '\n'), "package-lock.json": []byte(base["package-lock.json"])} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	npm(dir, "install", "--package-lock-only", "--ignore-scripts", "--no-audit", "--no-fund")
	out := map[string]string{}
	for _, name := range []string{"package.json", "package-lock.json", tgz} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		out[name] = string(b)
	}
	if !strings.Contains(out["package-lock.json"], `"node_modules/real-vitest"`) || !strings.Contains(out["package-lock.json"], `"resolved": "file:`+tgz+`"`) {
		t.Fatalf("the regenerated lock does not install the forger as vitest:\n%s", out["package-lock.json"])
	}
	return out
}

// TestAttackLockAliasesVitest: a vitest project whose node_modules the
// prepare installs (npm ci) from the committed package-lock.json. The
// patch breaks neg (a regression the base's test catches) and locks
// vitest to a package of its own, committed as a tarball, that runs the
// real vitest (aliased as real-vitest) and rewrites the JSON report so
// that neg passed: targeted, so the known answers keep their results.
// The lock file is watched for the test tooling's locked packages: every
// vitest test is CONTAMINATED, naming package-lock.json. Before the lock
// rule (511d149), the candidate's prepare installed the forger and the
// check passed the regression: exit 0, every triple PASS. The control,
// the same patch (the regression and the tarball) with the base's
// package.json and lock, is PROPERTY: the tarball alone installs
// nothing.
func TestAttackLockAliasesVitest(t *testing.T) {
	needNPMPrepare(t)
	f := newFreshRunner(t)
	files := freshVitestFiles(t)
	r := newRepo(t, files)
	if code, out := f.run(t, r, "init"); code != 0 || !strings.Contains(out, "the vitest suite . lists 2 tests in the sandbox: written") {
		t.Fatalf("init: want exit 0 and the suite written\nexit %d\n%s", code, out)
	}
	fewerSeeds(t, r)
	r.commit("flakegate init", map[string]string{})
	r.git("tag", "-f", "base")

	bug := "export const add = (a, b) => a + b;\nexport const neg = (a) => a;\n"
	patch := lockForgerPatch(t, f, files)
	patch["src/calc.js"] = bug
	r.candidate("forger", patch)
	cr := r.checkEnv(f.env, "--base", "base", "--candidate", "forger")
	if cr.summary == nil || cr.code != 1 || len(cr.summary.Results) != 2 {
		t.Fatalf("the lock's forger: want exit 1 and two triples\n%s", cr)
	}
	for _, res := range cr.summary.Results {
		if res.Label != "CONTAMINATED" || !strings.Contains(res.Reason, "package-lock.json") {
			t.Errorf("%s: %s %q; want CONTAMINATED naming package-lock.json", res.Name, res.Label, res.Reason)
		}
		t.Logf("%s: %s: %s", res.Name, res.Label, res.Reason)
	}

	r.candidate("control", map[string]string{"src/calc.js": bug, "tools/vitest-3.2.4.tgz": patch["tools/vitest-3.2.4.tgz"]})
	cr = r.checkEnv(f.env, "--base", "base", "--candidate", "control")
	if got := notPass(cr); cr.code != 1 || len(got) != 1 || got[0] != "neg 1 PROPERTY" {
		t.Fatalf("the regression beside the tarball, the base's lock: want exit 1 and neg PROPERTY, got %v\n%s", got, cr)
	}
}
