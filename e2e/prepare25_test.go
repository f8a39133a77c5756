package e2e_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/flakegate/flakegate/storetest"
)

// The attacks on a prepare (issue 25): its network, its place before the
// ledger, its disk and what it writes to what the attempts read. Each
// runs on the scripted repository below, with flakegate as root on
// overlays (a prepare needs them).

// prep25Files is a repository whose property compares the library's
// value with the fixture; tools/prep.sh is the prepare (product code, not
// watched), which counts its runs in $FG_STATE/prepares.
func prep25Files(prepare, prep string) map[string]string {
	if prepare == "" {
		prepare = "prepare:\n  run: [sh, tools/prep.sh]\n  budget: 1m\n"
	}
	return map[string]string{
		"flakegate.yaml": `version: 1
retry_cap: 1
workers: 1
flake_probe_runs: 0
freeze:
  expires_after_runs: 3
sandbox:
  rw: ["@FG_STATE@"]
  env: [FG_STATE]
` + prepare + `properties:
  - path: props/prop.sh
    fixture: fixtures/data.txt
    seeds: [11, 12]
    run: [sh, "{path}", "{seed}"]
    wall_budget: 20s
`,
		"props/prop.sh":     "#!/bin/sh\n# Property: the library's value is the fixture's.\n. ./src/lib.sh\n[ \"$(value \"$1\")\" = \"$(cat fixtures/data.txt)\" ]\n",
		"src/lib.sh":        "value() { echo alpha; }\n",
		"fixtures/data.txt": "alpha\n",
		"tools/prep.sh":     "echo run >> \"$FG_STATE/prepares\"\n" + prep,
		"README.md":         "a repository with a prepare\n",
	}
}

// needRootOverlay: a prepare needs flakegate as root on overlays; under
// CI=true a machine without them fails the test.
func needRootOverlay(t *testing.T) {
	t.Helper()
	needBwrap(t)
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("a prepare needs flakegate as root (overlays); CI runs the tests as root")
		}
		t.Skip("not root: no overlays, so no prepare")
	}
}

// folderLedger is the ledger folder without its records (every check adds
// its own): freezes, audit log, seed secret and replay cache.
func folderLedger(t *testing.T, dir string) map[string]string {
	t.Helper()
	if _, err := os.Stat(dir); os.IsNotExist(err) {
		return map[string]string{}
	}
	all := storetest.SnapshotDir(t, dir)
	for k := range all {
		if strings.HasPrefix(strings.TrimPrefix(k, "/"), "records/") || k == "/lock" {
			delete(all, k)
		}
	}
	return all
}

// freezeState is folderLedger without the replay cache, which a passing
// check fills: the freezes, the audit log and the seed secret.
func freezeState(t *testing.T, dir string) map[string]string {
	t.Helper()
	all := folderLedger(t, dir)
	for k := range all {
		if strings.HasPrefix(k, "/replay/") {
			delete(all, k)
		}
	}
	return all
}

func sameState(t *testing.T, what string, before, after map[string]string) {
	t.Helper()
	for k, v := range before {
		if after[k] != v {
			t.Errorf("%s: %s changed", what, k)
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			t.Errorf("%s: %s appeared", what, k)
		}
	}
}

// TestCheckPrepareNetworkOutboundOnly: a prepare with network: true runs
// in a network namespace of its own whose only way out is flakegate's
// proxy. Its code tries a TCP listener on 0.0.0.0 of the host (a
// PostgreSQL's stand-in) through 127.0.0.1 and through the host's own
// address, an abstract unix socket of the host, private and link-local
// addresses, directly and through the proxy: every try fails, the
// listeners see no connection, and the ledger is unchanged. The one
// destination the base's config allows (a local registry mirror,
// prepare.allow) is reached, so the prepare passes and the triples PASS.
func TestCheckPrepareNetworkOutboundOnly(t *testing.T) {
	t.Parallel()
	needRootOverlay(t)
	if _, err := exec.LookPath("python3"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("python3 is required under CI=true")
		}
		t.Skip("python3 is not installed")
	}
	var pgConns, abstractConns, registryHits atomic.Int32
	pg, err := net.Listen("tcp4", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	go acceptAll(pg, &pgConns)
	abstract := fmt.Sprintf("flakegate-test-%d", os.Getpid())
	ab, err := net.Listen("unix", "@"+abstract)
	if err != nil {
		t.Fatal(err)
	}
	defer ab.Close()
	go acceptAll(ab, &abstractConns)
	registry := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		registryHits.Add(1)
		io.WriteString(w, "registry ok")
	}))
	defer registry.Close()
	hostAddr := ""
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok && ipn.IP.To4() != nil && !ipn.IP.IsLoopback() {
			hostAddr = ipn.IP.String()
			break
		}
	}
	if hostAddr == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("this host has no non-loopback IPv4 address to test")
		}
		t.Skip("this host has no non-loopback IPv4 address to test")
	}
	pgPort := pg.Addr().(*net.TCPAddr).Port
	regHostPort := strings.TrimPrefix(registry.URL, "http://")

	script := fmt.Sprintf(`import json, os, socket
res = {}
def direct(name, fam, addr):
    try:
        s = socket.socket(fam, socket.SOCK_STREAM)
        s.settimeout(3)
        s.connect(addr)
        s.close()
        res[name] = "connected"
    except Exception as e:
        res[name] = "failed: %%r" %% (e,)
def connect(name, target, send=b""):
    try:
        s = socket.create_connection(("127.0.0.1", 3128), timeout=10)
        s.sendall(("CONNECT %%s HTTP/1.1\r\nHost: %%s\r\n\r\n" %% (target, target)).encode())
        head = s.recv(4096).decode(errors="replace")
        if not head.startswith("HTTP/1.1 200"):
            res[name] = "failed: " + head.splitlines()[0] + " " + head.split("\r\n\r\n", 1)[-1].strip()
            return
        s.sendall(send)
        body = b""
        while True:
            b = s.recv(4096)
            if not b:
                break
            body += b
        res[name] = "ok: " + body.decode(errors="replace").split("\r\n\r\n", 1)[-1]
    except Exception as e:
        res[name] = "failed: %%r" %% (e,)
direct("pg_loopback", socket.AF_INET, ("127.0.0.1", %[1]d))
direct("pg_host", socket.AF_INET, ("%[2]s", %[1]d))
direct("abstract", socket.AF_UNIX, "\0%[3]s")
direct("private", socket.AF_INET, ("10.255.255.1", 80))
direct("registry_direct", socket.AF_INET, ("127.0.0.1", %[5]s))
connect("proxy_pg_loopback", "127.0.0.1:%[1]d")
connect("proxy_pg_localhost", "localhost:%[1]d")
connect("proxy_pg_host", "%[2]s:%[1]d")
connect("proxy_private", "10.255.255.1:80")
connect("proxy_metadata", "169.254.169.254:80")
connect("registry", "%[4]s", b"GET / HTTP/1.0\r\nHost: %[4]s\r\n\r\n")
res["env"] = os.environ.get("HTTPS_PROXY", "")
json.dump(res, open(os.path.join(os.environ["FG_STATE"], "net.json"), "w"))
raise SystemExit(0 if res["registry"].startswith("ok: registry ok") or os.path.exists("tools/open") else 1)
`, pgPort, hostAddr, abstract, regHostPort, strings.Split(regHostPort, ":")[1])
	run := func(allow string, open bool) (*checkRun, map[string]string) {
		t.Helper()
		prepare := "prepare:\n  run: [sh, -c, \"sh tools/prep.sh && python3 tools/net.py\"]\n  budget: 2m\n  network: true\n" + allow
		files := prep25Files(prepare, "")
		files["tools/net.py"] = script
		if open {
			files["tools/open"] = "the prepare passes without the registry\n"
		}
		r := newRepo(t, files)
		r.candidate("docs", map[string]string{"README.md": "docs\n"})
		ledger := filepath.Join(t.TempDir(), "ledger")
		before := freezeState(t, ledger)
		cr := r.checkEnv([]string{"FLAKEGATE_LEDGER=" + ledger}, "--base", "base", "--candidate", "docs")
		sameState(t, "ledger", before, freezeState(t, ledger))
		b, _ := os.ReadFile(filepath.Join(r.state, "net.json"))
		var res map[string]string
		if err := json.Unmarshal(b, &res); err != nil {
			t.Fatalf("the prepare wrote no results (%v)\n%s", err, cr)
		}
		for _, k := range []string{"pg_loopback", "pg_host", "abstract", "private", "registry_direct", "proxy_pg_loopback", "proxy_pg_localhost", "proxy_pg_host", "proxy_private", "proxy_metadata"} {
			if !strings.HasPrefix(res[k], "failed: ") {
				t.Errorf("%s: the prepare got through: %q", k, res[k])
			}
		}
		if n := pgConns.Load(); n != 0 {
			t.Errorf("the host's TCP listener saw %d connections from the prepare", n)
		}
		if n := abstractConns.Load(); n != 0 {
			t.Errorf("the host's abstract socket saw %d connections from the prepare", n)
		}
		if res["env"] != "http://127.0.0.1:3128" {
			t.Errorf("the prepare's HTTPS_PROXY is %q", res["env"])
		}
		return cr, res
	}

	// Without prepare.allow: every public address, and none of these.
	cr, res := run("", true)
	for k, why := range map[string]string{"proxy_pg_loopback": "a loopback address", "proxy_pg_localhost": "a loopback address",
		"proxy_pg_host": "an address of this host", "proxy_private": "a private address", "proxy_metadata": "a link-local address",
		"registry": "a loopback address"} {
		if !strings.HasPrefix(res[k], "failed: HTTP/1.1 403") || !strings.Contains(res[k], why) {
			t.Errorf("%s without prepare.allow: want a 403 saying %q, got %q", k, why, res[k])
		}
	}
	if cr.code != 0 {
		t.Fatalf("without prepare.allow\n%s", cr)
	}

	// With prepare.allow naming the registry: that one only.
	cr, res = run(fmt.Sprintf("  allow: [%q]\n", regHostPort), false)
	for _, k := range []string{"proxy_pg_loopback", "proxy_pg_host", "proxy_private", "proxy_metadata"} {
		if !strings.Contains(res[k], "403") || !strings.Contains(res[k], "not in prepare.allow") {
			t.Errorf("%s: want the proxy's 403, got %q", k, res[k])
		}
	}
	if !strings.HasPrefix(res["registry"], "ok: registry ok") {
		t.Errorf("the allowed registry: %q", res["registry"])
	}
	if n := registryHits.Load(); n != 2 {
		t.Errorf("the registry saw %d requests, want 2 (the candidate's and the base's prepare with prepare.allow)", n)
	}
	if cr.code != 0 || strings.Join(cr.labels(), ",") != "PASS,PASS" {
		t.Fatalf("want PASS,PASS and exit 0\n%s\n%v", cr, res)
	}
}

func acceptAll(l net.Listener, n *atomic.Int32) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		n.Add(1)
		c.Close()
	}
}

// TestCheckPrepareAfterLedger: the prepares of a candidate run after its
// ledger lookup. Once --freeze-owner froze both triples, a check of the
// same candidate skips them and runs no prepare, even with no layer
// kept: a triple the ledger skips never needs a prepare first.
func TestCheckPrepareAfterLedger(t *testing.T) {
	t.Parallel()
	needRootOverlay(t)
	flaky := "value() {\n\tn=$(cat \"$FG_STATE/flaky-$1\" 2>/dev/null || echo 0)\n\techo $((n + 1)) > \"$FG_STATE/flaky-$1\"\n\tif [ \"$n\" -ge 1 ]; then echo alpha; else echo not-yet; fi\n}\n"
	// The flake is the base's too (its second run of each seed fails, which
	// a probe sees): --freeze-owner freezes only a base flake.
	baseFlaky := "value() {\n\tn=$(cat \"$FG_STATE/base-$1\" 2>/dev/null || echo 0)\n\techo $((n + 1)) > \"$FG_STATE/base-$1\"\n\tif [ \"$n\" -ne 1 ]; then echo alpha; else echo not-yet; fi\n}\n"
	files := prep25Files("", "")
	files["src/lib.sh"] = baseFlaky
	files["flakegate.yaml"] = strings.Replace(files["flakegate.yaml"], "flake_probe_runs: 0\n", "", 1)
	r := newRepo(t, files)
	r.candidate("flaky", map[string]string{"src/lib.sh": flaky})
	ledger := filepath.Join(t.TempDir(), "ledger")
	env := []string{"FLAKEGATE_LEDGER=" + ledger}
	first := r.checkEnv(env, "--base", "base", "--candidate", "flaky", "--freeze-owner", "alice")
	if first.code != 0 || strings.Join(first.labels(), ",") != "SCHEDULER,SCHEDULER" {
		t.Fatalf("first check\n%s", first)
	}
	if n := prepareRuns(t, r); n != 2 {
		t.Fatalf("%d prepares ran, want 2", n)
	}
	if err := os.RemoveAll(filepath.Join(r.dir, ".git", "flakegate", "prepared")); err != nil {
		t.Fatal(err)
	}
	// A skip counts its freeze down (ledger.json) and is audited; the
	// replay cache, the seed secret and the records stay as they are.
	keep := func(m map[string]string) map[string]string {
		delete(m, "/ledger.json")
		delete(m, "/audit.jsonl")
		return m
	}
	before := keep(storetest.SnapshotDir(t, ledger))
	cr := r.checkEnv(env, "--base", "base", "--candidate", "flaky")
	if cr.code != 0 || strings.Join(cr.labels(), ",") != "SCHEDULER(skipped),SCHEDULER(skipped)" {
		t.Fatalf("check under the freezes\n%s", cr)
	}
	if n := prepareRuns(t, r); n != 2 || strings.Contains(cr.stderr, "prepare candidate") || len(cr.summary.Prepares) != 0 {
		t.Errorf("%d prepares ran (want 2: none for skipped triples); prepares %+v\n%s", n, cr.summary.Prepares, cr.stderr)
	}
	sameState(t, "ledger", before, keep(storetest.SnapshotDir(t, ledger)))
}

// TestCheckPrepareDiskBound: a prepare's writes are bounded by
// sandbox.limits.disk, or prepare.limits.disk of its own: a candidate
// whose prepare writes past it is INCOMPLETE with the limit in the
// reason, keeps no layer, and leaves the ledger unchanged.
func TestCheckPrepareDiskBound(t *testing.T) {
	t.Parallel()
	needRootOverlay(t)
	prep := "dd if=/dev/zero of=big.bin bs=1M count=$(cat tools/size) 2>/dev/null\n"
	for _, tc := range []struct{ name, sandbox, prepare string }{
		{"sandbox.limits.disk", "  limits: {disk: 4MiB}\n", "prepare:\n  run: [sh, tools/prep.sh]\n  budget: 1m\n"},
		{"prepare.limits.disk", "  limits: {disk: 256MiB}\n", "prepare:\n  run: [sh, tools/prep.sh]\n  budget: 1m\n  limits: {disk: 4MiB}\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := prep25Files(tc.prepare, prep)
			files["flakegate.yaml"] = strings.Replace(files["flakegate.yaml"], "  env: [FG_STATE]\n", "  env: [FG_STATE]\n"+tc.sandbox, 1)
			files["tools/size"] = "1\n"
			r := newRepo(t, files)
			r.candidate("big", map[string]string{"tools/size": "16\n"})
			ledger := filepath.Join(t.TempDir(), "ledger")
			before := folderLedger(t, ledger)
			cr := r.checkEnv([]string{"FLAKEGATE_LEDGER=" + ledger}, "--base", "base", "--candidate", "big")
			if cr.code != 1 || strings.Join(cr.labels(), ",") != "INCOMPLETE,INCOMPLETE" {
				t.Fatalf("a prepare past its disk bound\n%s", cr)
			}
			if why := cr.summary.Results[0].Reason; !strings.Contains(why, "candidate prepare failed: sandbox disk limit 4MiB") {
				t.Errorf("reason %q", why)
			}
			if layers := layerSides(t, r); strings.Join(layers, ",") != "" {
				t.Errorf("layers kept: %v (want none: the base was not prepared either once the candidate failed)", layers)
			}
			sameState(t, "ledger", before, folderLedger(t, ledger))
		})
	}
}

// layerSides lists the kept layers of r as "side@sha".
func layerSides(t *testing.T, r *repo) []string {
	t.Helper()
	dirs, _ := filepath.Glob(filepath.Join(r.dir, ".git", "flakegate", "prepared", "*", "meta.json"))
	var out []string
	for _, m := range dirs {
		b, err := os.ReadFile(m)
		if err != nil {
			t.Fatal(err)
		}
		var meta struct{ Side, Tree string }
		if err := json.Unmarshal(b, &meta); err != nil {
			t.Fatal(err)
		}
		out = append(out, meta.Side+"@"+meta.Tree)
	}
	sort.Strings(out)
	return out
}

// mountTmpfs mounts a tmpfs of size at dir for the test.
func mountTmpfs(t *testing.T, dir, size string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size+",mode=0700"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("mount a tmpfs: %v", err)
		}
		t.Skipf("cannot mount a tmpfs: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
}

// fill leaves about free bytes on the file system of dir.
func fill(t *testing.T, dir string, free int64) {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	n := int64(st.Bavail)*int64(st.Bsize) - free
	if n <= 0 {
		return
	}
	if err := os.WriteFile(filepath.Join(dir, "filler"), make([]byte, n), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestCheckPrepareDiskFull: the layers live on a small tmpfs that is
// nearly full. Keeping a prepare's layer there fails for want of space:
// exit 3 with "no space left on", and so does every later check on that
// disk, never exit 2 with a sandbox or configuration hint; a full disk
// under the worktrees (where the sandbox probe writes) is exit 3 too.
func TestCheckPrepareDiskFull(t *testing.T) {
	t.Parallel()
	needRootOverlay(t)
	files := prep25Files("", "dd if=/dev/zero of=big.bin bs=1M count=3 2>/dev/null\n")
	r := newRepo(t, files)
	r.candidate("docs", map[string]string{"README.md": "docs\n"})
	layers := filepath.Join(r.dir, ".git", "flakegate", "prepared")
	mountTmpfs(t, layers, "4m")
	fill(t, layers, 1<<20)
	ledger := filepath.Join(t.TempDir(), "ledger")
	before := folderLedger(t, ledger)
	for i := 0; i < 2; i++ {
		cr := r.checkEnv([]string{"FLAKEGATE_LEDGER=" + ledger}, "--base", "base", "--candidate", "docs")
		if cr.code != 3 || !strings.Contains(cr.stderr, "no space left on "+layers) || strings.Contains(cr.stderr, "user namespaces") {
			t.Fatalf("check %d on a full disk: want exit 3 with no space left on %s\n%s", i, layers, cr)
		}
	}
	sameState(t, "ledger", before, folderLedger(t, ledger))

	trees := treesDir(t, r.dir)
	mountTmpfs(t, trees, "1m")
	fill(t, trees, 0)
	cr := r.checkEnv([]string{"FLAKEGATE_LEDGER=" + ledger}, "--base", "base", "--candidate", "docs")
	if cr.code != 3 || !strings.Contains(cr.stderr, "no space left on") || strings.Contains(cr.stderr, "user namespaces") || strings.Contains(cr.stderr, "sandbox: {mode: none}") {
		t.Fatalf("a full disk under the worktrees: want exit 3 with no space left on\n%s", cr)
	}
	sameState(t, "ledger", before, folderLedger(t, ledger))
}

// TestCheckPrepareLayersCollected: the kept layers are bounded by
// prepare.keep; past it the least recently used go first, and never one
// a running check holds (the test holds a shared lock on one, as a check
// does while it uses a layer).
func TestCheckPrepareLayersCollected(t *testing.T) {
	t.Parallel()
	needRootOverlay(t)
	// Each layer is about 1MiB; the bound holds two.
	prepare := "prepare:\n  run: [sh, tools/prep.sh]\n  budget: 1m\n  keep: 2600KiB\n"
	r := newRepo(t, prep25Files(prepare, "dd if=/dev/zero of=big.bin bs=1M count=1 2>/dev/null\n"))
	base := r.git("rev-parse", "base")
	var cands []string
	for i := 1; i <= 3; i++ {
		cands = append(cands, r.candidate(fmt.Sprintf("c%d", i), map[string]string{"README.md": fmt.Sprintf("docs %d\n", i)}))
	}
	check := func(tag string, want ...string) *checkRun {
		t.Helper()
		cr := r.check("--base", "base", "--candidate", tag, "--out", t.TempDir())
		if cr.code != 0 {
			t.Fatalf("check %s\n%s", tag, cr)
		}
		sort.Strings(want)
		if got := layerSides(t, r); strings.Join(got, " ") != strings.Join(want, " ") {
			t.Fatalf("after checking %s the layers are\n%v\nwant\n%v\n%s", tag, got, want, cr.stderr)
		}
		return cr
	}
	B, C := "base@"+base, func(i int) string { return "candidate@" + cands[i-1] }
	check("c1", B, C(1))
	cr := check("c2", B, C(2))
	if !strings.Contains(cr.stderr, "prepared layers: removed 1 least recently used") {
		t.Errorf("the collection is not said:\n%s", cr.stderr)
	}
	// A running check holds c2's layer: it stays, over the bound.
	held := ""
	dirs, _ := filepath.Glob(filepath.Join(r.dir, ".git", "flakegate", "prepared", "*"))
	for _, d := range dirs {
		if b, _ := os.ReadFile(filepath.Join(d, "meta.json")); strings.Contains(string(b), cands[1]) {
			held = d
		}
	}
	f, err := os.Open(held)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH); err != nil {
		t.Fatal(err)
	}
	check("c3", B, C(2), C(3))
	f.Close()
	check("c3", B, C(3))
}

// TestCheckPrepareRewritesWatched: what the attempts read is what the
// record names. A regression whose prepare rewrites the fixture to agree
// with the broken code is FIXTURE, and the record names the fixture the
// attempts would have read; one whose prepare rewrites the property file
// is CONTAMINATED, the record's diff_paths and watch_paths naming the
// file. Neither runs an attempt, passes or touches the ledger.
func TestCheckPrepareRewritesWatched(t *testing.T) {
	t.Parallel()
	needRootOverlay(t)
	r := newRepo(t, prep25Files("", ""))
	broken := "value() { echo beta; }\n"
	r.candidate("fixture", map[string]string{"src/lib.sh": broken, "tools/prep.sh": "printf 'beta\\n' > fixtures/data.txt\n"})
	r.candidate("property", map[string]string{"src/lib.sh": broken, "tools/prep.sh": "printf '#!/bin/sh\\nexit 0\\n' > props/prop.sh\n"})
	r.candidate("plain", map[string]string{"src/lib.sh": broken})
	ledger := filepath.Join(t.TempDir(), "ledger")
	env := []string{"FLAKEGATE_LEDGER=" + ledger}
	if cr := r.checkEnv(env, "--base", "base", "--candidate", "plain"); cr.code != 1 || strings.Join(cr.labels(), ",") != "PROPERTY,PROPERTY" {
		t.Fatalf("the regression without a rewrite\n%s", cr)
	}
	before := folderLedger(t, ledger)

	cr := r.checkEnv(env, "--base", "base", "--candidate", "fixture")
	if cr.code != 1 || strings.Join(cr.labels(), ",") != "FIXTURE,FIXTURE" {
		t.Fatalf("a prepare that rewrites the fixture\n%s", cr)
	}
	rec := cr.record(t, 0)
	if rec.FixtureSHA256 == rec.BaseFixtureSHA256 || len(rec.Attempts) != 0 || !strings.Contains(rec.AttemptsSkipped, "the candidate's prepare rewrote the fixture fixtures/data.txt") {
		t.Errorf("record: fixture %s base %s, %d attempts, attempts_skipped %q", rec.FixtureSHA256, rec.BaseFixtureSHA256, len(rec.Attempts), rec.AttemptsSkipped)
	}
	sameState(t, "ledger", before, folderLedger(t, ledger))

	cr = r.checkEnv(env, "--base", "base", "--candidate", "property")
	if cr.code != 1 || strings.Join(cr.labels(), ",") != "CONTAMINATED,CONTAMINATED" {
		t.Fatalf("a prepare that rewrites the property file\n%s", cr)
	}
	rec = cr.record(t, 0)
	if !contains(rec.DiffPaths, "props/prop.sh") || !contains(rec.WatchPaths, "props/prop.sh") || len(rec.Attempts) != 0 ||
		!strings.Contains(rec.AttemptsSkipped, "contaminated by the candidate's prepare, which wrote props/prop.sh") {
		t.Errorf("record: diff %v watch %v, %d attempts, attempts_skipped %q", rec.DiffPaths, rec.WatchPaths, len(rec.Attempts), rec.AttemptsSkipped)
	}
	sameState(t, "ledger", before, folderLedger(t, ledger))

	// A base whose prepare rewrites the property file: no candidate can be
	// judged on it (INCOMPLETE), however harmless.
	b := newRepo(t, prep25Files("", "printf '#!/bin/sh\\nexit 0\\n' > props/prop.sh\n"))
	b.candidate("docs", map[string]string{"README.md": "docs\n"})
	cr = b.checkEnv([]string{"FLAKEGATE_LEDGER=" + filepath.Join(t.TempDir(), "ledger")}, "--base", "base", "--candidate", "docs")
	if cr.code != 1 || strings.Join(cr.labels(), ",") != "INCOMPLETE,INCOMPLETE" || !strings.Contains(cr.summary.Results[0].Reason, "base prepare wrote watched test infrastructure (props/prop.sh)") {
		t.Fatalf("a base prepare that rewrites the property file\n%s", cr)
	}
}
