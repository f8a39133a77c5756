package e2e_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flakegate/flakegate/internal/pgtest"
	"github.com/jackc/pgx/v5"
)

// fleetGoMain is the TestMain of each package of the fleet's Go module:
// every test binary an attempt starts logs one line to <shared>/go.log:
// the side (side.txt), the seed, the attempt's process (its pid
// namespace and when the namespace's first process started: each
// attempt's sandbox has its own, whose number a later one may reuse, and
// the binaries of one batch's packages run in it, whether go test runs
// them or the build step's kept binaries run) and the package. On the
// candidate, the first run of the seed named by <shared>/hang-seed hangs
// in p1 (it makes <shared>/hang), so a test can kill its runner in the
// middle of a batch.
const fleetGoMain = `package %[1]s

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var (
	seed   = flag.Int("seed", 0, "the seed")
	shared = flag.String("shared", "", "the folder of go.log")
)

func TestMain(m *testing.M) {
	flag.Parse()
	b, _ := os.ReadFile("../side.txt")
	side := strings.TrimSpace(string(b))
	ns, err := os.Readlink("/proc/self/ns/pid")
	stat, serr := os.ReadFile("/proc/1/stat")
	if err != nil || serr != nil {
		fmt.Println("cannot read the pid namespace:", err, serr)
		os.Exit(3)
	}
	build := ns + "/" + strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))[19]
	f, err := os.OpenFile(filepath.Join(*shared, "go.log"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o666)
	if err != nil {
		fmt.Println("cannot log:", err)
		os.Exit(3)
	}
	fmt.Fprintf(f, "%%s %%d %%s %[1]s\n", side, *seed, build)
	f.Close()
	if hang, _ := os.ReadFile(filepath.Join(*shared, "hang-seed")); "%[1]s" == "p1" && side == "candidate" && strings.TrimSpace(string(hang)) == fmt.Sprint(*seed) && os.Mkdir(filepath.Join(*shared, "hang"), 0o777) == nil {
		time.Sleep(300 * time.Second)
	}
	os.Exit(m.Run())
}
`

// fleetGoModule is a module of packages p1 and p2 with TestOne and
// TestTwo each, seeds 1..3: 12 triples, which a check batches into one
// process per seed. The candidate breaks p2's Double: p2's
// TestOne is PROPERTY for every seed. The run line passes shared as a
// test flag, and the sandbox shares it read-write (sandbox.rw).
func fleetGoModule(t *testing.T, shared string) *repo {
	t.Helper()
	var cfg strings.Builder
	fmt.Fprintf(&cfg, "version: 1\nretry_cap: 1\nworkers: 1\nflake_probe_runs: 0\nsandbox:\n  rw: [%q]\nproperties:\n", shared)
	for _, pkg := range []string{"p1", "p2"} {
		for _, name := range []string{"TestOne", "TestTwo"} {
			fmt.Fprintf(&cfg, "  - path: %[1]s/%[1]s_test.go\n    name: %[2]s\n    seeds: [1, 2, 3]\n    run: [go, test, -count=1, -run, \"^{name}$\", ./%[1]s, \"-seed={seed}\", \"-shared=%[3]s\"]\n    wall_budget: 120s\n", pkg, name, shared)
		}
	}
	files := map[string]string{
		"go.mod":         "module example.com/fleet\n\ngo 1.21\n",
		"README.md":      "fleet of go tests\n",
		"side.txt":       "base\n",
		"flakegate.yaml": cfg.String(),
	}
	for _, pkg := range []string{"p1", "p2"} {
		files[pkg+"/"+pkg+".go"] = "package " + pkg + "\n\n// Double doubles.\nfunc Double(x int) int { return 2 * x }\n"
		files[pkg+"/main_test.go"] = fmt.Sprintf(fleetGoMain, pkg)
		files[pkg+"/"+pkg+"_test.go"] = "package " + pkg + "\n\nimport \"testing\"\n\nfunc TestOne(t *testing.T) {\n\tif Double(3) != 6 {\n\t\tt.Fatal(\"Double(3) is not 6\")\n\t}\n}\n\nfunc TestTwo(t *testing.T) {}\n"
	}
	r := newRepo(t, files)
	r.candidate("cand", map[string]string{"side.txt": "candidate\n", "p2/p2.go": "package p2\n\n// Double is broken.\nfunc Double(x int) int { return x * x }\n"})
	return r
}

// goProcesses counts the attempts' processes of <shared>/go.log by side
// (distinct build folders), and the lines (package binaries).
func goProcesses(t *testing.T, shared string) (procs, binaries map[string]int) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(shared, "go.log"))
	if err != nil {
		t.Fatal(err)
	}
	procs, binaries = map[string]int{}, map[string]int{}
	seen := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		f := strings.Fields(l)
		if len(f) != 4 {
			t.Fatalf("go.log line %q", l)
		}
		binaries[f[0]]++
		if !seen[f[2]] {
			seen[f[2]] = true
			procs[f[0]]++
		}
	}
	return procs, binaries
}

// TestFleetJoinGoBatches: two runners join one check of a Go module on
// PostgreSQL. A joined runner claims a whole batch (the batch plan a
// check alone makes) and runs it as one process per attempt:
// the processes of both runners together are exactly those of
// one runner checking alone, one per seed and attempt (not one per
// triple), and the labels are the same. The runner in the middle of one
// batch is SIGKILLed: the other takes every triple of that batch over
// once their leases expire (one expiry each), as one batch again.
func TestFleetJoinGoBatches(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end: PostgreSQL, git, go and three flakegate processes")
	}
	needTool(t, "go")
	const checkID, hangSeed = "go-batches", "2"
	dsn := pgtest.NewCluster(t).DSN(t)
	shared := mkShared(t)
	if err := os.Chmod(shared, 0o777); err != nil {
		t.Fatal(err)
	}
	killHang(t, shared)
	origin := fleetGoModule(t, shared)

	// The reference: one runner alone, its own file store.
	single := origin.clone(t, "single").check("--base", "base", "--candidate", "cand")
	if single.code != 1 {
		t.Fatalf("the single runner: %s", single)
	}
	want := "PASS,PASS,PASS,PASS,PASS,PASS,PROPERTY,PROPERTY,PROPERTY,PASS,PASS,PASS"
	if got := strings.Join(single.labels(), ","); got != want {
		t.Fatalf("the single runner's labels %s, want %s\n%s", got, want, single)
	}
	singleProcs, singleBins := goProcesses(t, shared)
	// One batch per seed, of both packages (two binaries): per seed the
	// first candidate attempt, the base seed and the retry (p2's TestOne
	// fails on the candidate), never a process per triple.
	if singleProcs["candidate"] != 6 || singleProcs["base"] != 3 || singleBins["candidate"] != 12 || singleBins["base"] != 6 {
		t.Fatalf("the single runner ran %v processes (%v binaries); want candidate 6, base 3 (12 and 6 binaries)", singleProcs, singleBins)
	}
	if err := os.Remove(filepath.Join(shared, "go.log")); err != nil {
		t.Fatal(err)
	}

	writeShared(t, shared, "hang-seed", hangSeed)
	var runners []*proc
	for _, id := range []string{"r1", "r2"} {
		r := origin.clone(t, "runner-"+id)
		runners = append(runners, r.start(t, id, "check", "--json", "--base", "base", "--candidate", "cand", "--ledger", dsn,
			"--join", "--check-id", checkID, "--runner-id", id, "--lease", "6s"))
	}
	waitFile(t, filepath.Join(shared, "hang"), 5*time.Minute, runners...)
	victim := queryString(t, dsn, `SELECT runner_id FROM flakegate.check_triples WHERE check_id = $1 AND seed = $2 LIMIT 1`, checkID, hangSeed)
	var killed, other *proc
	for _, p := range runners {
		if p.name == victim {
			killed = p
		} else {
			other = p
		}
	}
	if killed == nil {
		t.Fatalf("the hanging batch is held by %q, not a runner", victim)
	}
	held := queryString(t, dsn, `SELECT string_agg(DISTINCT coalesce(runner_id, '-'), ',') FROM flakegate.check_triples WHERE check_id = $1 AND seed = $2`, checkID, hangSeed)
	if held != victim {
		t.Errorf("the triples of seed %s (one batch) are held by %s, want %s alone", hangSeed, held, victim)
	}
	if err := killed.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed.wait(t, time.Minute)
	other.wait(t, 6*time.Minute)
	if other.code != single.code {
		t.Fatalf("runner %s exit %d, the single runner %d\n%s", other.name, other.code, single.code, other)
	}
	var got []string
	for _, r := range other.summary(t).Results {
		got = append(got, string(r.Label))
	}
	if got := strings.Join(got, ","); got != want {
		t.Errorf("the joined check's labels %s, want the single runner's %s\n%s", got, want, other)
	}

	// The killed batch's process is the one process more than the
	// single runner's: the takeover ran the batch as one process again.
	procs, bins := goProcesses(t, shared)
	if procs["candidate"] != singleProcs["candidate"]+1 || procs["base"] != singleProcs["base"] {
		t.Errorf("the joined runners ran %v processes (%v binaries); want the single runner's %v and one killed", procs, bins, singleProcs)
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT seed, claims, expiries, runner_id FROM flakegate.check_triples WHERE check_id = $1 ORDER BY position`, checkID)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for rows.Next() {
		var seed, runner string
		var claims, expiries int
		if err := rows.Scan(&seed, &claims, &expiries, &runner); err != nil {
			t.Fatal(err)
		}
		wantClaims, wantExpiries, wantRunner := 1, 0, ""
		if seed == hangSeed {
			wantClaims, wantExpiries, wantRunner = 2, 1, other.name
		}
		if claims != wantClaims || expiries != wantExpiries || wantRunner != "" && runner != wantRunner {
			lines = append(lines, fmt.Sprintf("seed %s: %d claims, %d expiries, labelled by %s", seed, claims, expiries, runner))
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	if len(lines) > 0 {
		t.Errorf("want one claim per triple, two (one expiry) for seed %s's, taken over by %s:\n%s", hangSeed, other.name, strings.Join(lines, "\n"))
	}
}
