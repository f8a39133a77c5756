// Package pgtest gives tests a real PostgreSQL database: a fresh database
// per test on a throwaway cluster that the test binary starts itself
// (initdb into a temporary folder, as an unprivileged user, listening only
// on a unix socket in that folder), or on the server named by
// $FLAKEGATE_TEST_DSN.
//
// Without the PostgreSQL server binaries the tests are skipped, except when
// CI=true: there a missing server fails them.
//
// A test binary that uses DSN calls Main from its TestMain, so the shared
// cluster is stopped and removed when the tests end; one whose tests race
// processes over one freeze (RunConsumers: the store's own, the CLI's
// freeze consume) calls MainWithConsumers instead.
package pgtest

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// EnvDSN names the variable that points the tests at an existing server.
// Its role needs CREATEDB: every test gets a database of its own.
const EnvDSN = "FLAKEGATE_TEST_DSN"

// EnvBinDir names the variable that overrides where initdb and postgres
// are found.
const EnvBinDir = "FLAKEGATE_PG_BINDIR"

// EnvLedgerKey names the variable that holds the ledger key, and
// LedgerKey is the key tests run with: Main sets it unless it is set, so
// that flakegate commands a test runs authenticate the PostgreSQL rows
// they write (a test of a ledger without a key sets it to "").
const (
	EnvLedgerKey = "FLAKEGATE_LEDGER_KEY"
	LedgerKey    = "pgtest-ledger-key-for-tests-only-0123456789abcdef"
)

var shared struct {
	once    sync.Once
	cluster *Cluster
	err     error
}

// Main runs the tests, then stops and removes the shared cluster, and
// exits with the tests' code. Call it from TestMain.
func Main(m *testing.M) {
	if _, ok := os.LookupEnv(EnvLedgerKey); !ok {
		os.Setenv(EnvLedgerKey, LedgerKey) //nolint:errcheck // a valid name and value
	}
	code := m.Run()
	if shared.cluster != nil {
		if err := shared.cluster.close(); err != nil {
			fmt.Fprintln(os.Stderr, "pgtest:", err)
		}
	}
	os.Exit(code)
}

// WithPassword returns dsn with the password pw: the test clusters trust
// local connections, so any password logs in, and a test can look for it
// in what it must never show.
func WithPassword(tb testing.TB, dsn, pw string) string {
	tb.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		tb.Fatal(err)
	}
	u.User = url.UserPassword(u.User.Username(), pw)
	return u.String()
}

// DSN returns the URL of a new, empty database that is dropped when tb
// ends. It uses $FLAKEGATE_TEST_DSN's server when set, else a cluster
// started once per test binary.
//
// Under go test -short it skips tb unless $FLAKEGATE_TEST_DSN is set:
// starting a cluster takes seconds.
func DSN(tb testing.TB) string {
	tb.Helper()
	if dsn := os.Getenv(EnvDSN); dsn != "" {
		return newDatabase(tb, dsn)
	}
	if testing.Short() {
		tb.Skip("starts a PostgreSQL cluster; run without -short, or set " + EnvDSN)
	}
	shared.once.Do(func() {
		shared.cluster, shared.err = startCluster()
	})
	if shared.err != nil {
		unavailable(tb, shared.err)
	}
	return shared.cluster.DSN(tb)
}

// Cluster is a throwaway PostgreSQL server. Its methods are safe for
// concurrent use.
type Cluster struct {
	dir  string // temporary root: data/, the socket, the log
	bin  string // folder of initdb and postgres
	cred *syscall.Credential

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited
}

// NewCluster starts a cluster of tb's own (for tests that stop and
// restart the server) and removes it when tb ends. Under go test -short
// it skips tb.
func NewCluster(tb testing.TB) *Cluster {
	tb.Helper()
	if testing.Short() {
		tb.Skip("starts a PostgreSQL cluster of its own; run without -short")
	}
	c, err := startCluster()
	if err != nil {
		unavailable(tb, err)
	}
	tb.Cleanup(func() {
		if err := c.close(); err != nil {
			tb.Error(err)
		}
	})
	return c
}

// errNoServer says the PostgreSQL server binaries are not installed.
type errNoServer struct{ msg string }

func (e *errNoServer) Error() string { return e.msg }

// unavailable skips tb when the server binaries are missing (fails it when
// CI=true) and fails it for any other error.
func unavailable(tb testing.TB, err error) {
	tb.Helper()
	if _, ok := err.(*errNoServer); ok && os.Getenv("CI") != "true" {
		tb.Skipf("pgtest: %v (set %s, or install Debian's postgresql package)", err, EnvDSN)
	}
	tb.Fatalf("pgtest: %v", err)
}

// binDir finds the folder holding initdb and postgres.
func binDir() (string, error) {
	if d := os.Getenv(EnvBinDir); d != "" {
		return d, nil
	}
	// Debian installs the server outside PATH, one folder per major version.
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	sort.Slice(matches, func(i, j int) bool { return majorOf(matches[i]) > majorOf(matches[j]) })
	if len(matches) > 0 {
		return filepath.Dir(matches[0]), nil
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", &errNoServer{"no PostgreSQL server binaries (initdb, postgres) found"}
}

func majorOf(initdb string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(initdb))))
	return n
}

// serverUser returns the credential to run the server with: PostgreSQL
// refuses to run as root, so root runs it as the "postgres" user (or
// "nobody"); anyone else runs it as themselves (nil).
func serverUser() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
		gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
		if err1 == nil && err2 == nil {
			return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
		}
	}
	return nil, fmt.Errorf("running as root and no unprivileged user (postgres, nobody) to run PostgreSQL as")
}

// startCluster runs initdb into a new temporary folder and starts the
// server on a unix socket in it.
func startCluster() (*Cluster, error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	for _, prog := range []string{"initdb", "postgres"} {
		if _, err := os.Stat(filepath.Join(bin, prog)); err != nil {
			return nil, &errNoServer{fmt.Sprintf("no %s in %s", prog, bin)}
		}
	}
	cred, err := serverUser()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "flakegate-pg-")
	if err != nil {
		return nil, err
	}
	c := &Cluster{dir: dir, bin: bin, cred: cred}
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	initdb := c.command("initdb", "-D", c.dataDir(), "-U", "postgres", "-A", "trust",
		"-E", "UTF8", "--no-locale", "--no-sync", "--no-instructions")
	if out, err := initdb.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("initdb: %v\n%s", err, out)
	}
	if err := c.start(); err != nil {
		c.close()
		return nil, err
	}
	return c, nil
}

func (c *Cluster) dataDir() string { return filepath.Join(c.dir, "data") }

const port = "5432" // only names the socket file: no TCP listener

// command builds an exec.Cmd for one of the server programs, run as the
// cluster's user, killed (SIGQUIT: immediate shutdown) if the test binary
// dies first.
func (c *Cluster) command(prog string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(c.bin, prog), args...)
	cmd.Dir = c.dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "LC_ALL=C", "HOME=" + c.dir}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred, Pdeathsig: syscall.SIGQUIT}
	return cmd
}

// start starts the server and waits until it accepts connections.
func (c *Cluster) start() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cmd != nil {
		return fmt.Errorf("the cluster is running already")
	}
	logf, err := os.OpenFile(filepath.Join(c.dir, "postgres.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := c.command("postgres", "-D", c.dataDir(), "-k", c.dir, "-p", port,
		"-c", "listen_addresses=", "-c", "fsync=off", "-c", "full_page_writes=off",
		"-c", "max_connections=200", "-c", "log_min_messages=warning")
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("postgres: %v", err)
	}
	done := make(chan struct{})
	go func() {
		cmd.Wait() //nolint:errcheck // the exit is awaited through done
		close(done)
	}()
	c.cmd, c.done = cmd, done

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for {
		conn, err := pgx.Connect(ctx, c.adminDSN("postgres"))
		if err == nil {
			conn.Close(ctx)
			return nil
		}
		select {
		case <-done:
			c.cmd = nil
			return fmt.Errorf("postgres exited while starting; log:\n%s", c.logTail())
		case <-ctx.Done():
			return fmt.Errorf("postgres did not accept connections within 60s: %v; log:\n%s", err, c.logTail())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// stop shuts the server down with sig (SIGINT: fast, SIGQUIT: immediate)
// and waits for it to exit.
func (c *Cluster) stop(sig syscall.Signal) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cmd == nil {
		return nil
	}
	c.cmd.Process.Signal(sig) //nolint:errcheck // it may have exited already
	select {
	case <-c.done:
	case <-time.After(30 * time.Second):
		c.cmd.Process.Kill() //nolint:errcheck
		<-c.done
	}
	c.cmd = nil
	return nil
}

// close stops the server and removes its folder.
func (c *Cluster) close() error {
	c.stop(syscall.SIGINT) //nolint:errcheck // never fails
	return os.RemoveAll(c.dir)
}

// Stop shuts the server down the way an administrator does (fast
// shutdown: open transactions are rolled back) and waits until it is gone.
func (c *Cluster) Stop(tb testing.TB) {
	tb.Helper()
	if err := c.stop(syscall.SIGINT); err != nil {
		tb.Fatal(err)
	}
}

// Crash kills the server without a shutdown checkpoint (immediate
// shutdown, as after a power cut of the server process).
func (c *Cluster) Crash(tb testing.TB) {
	tb.Helper()
	if err := c.stop(syscall.SIGQUIT); err != nil {
		tb.Fatal(err)
	}
}

// Start starts a stopped server again on the same data and socket, so
// DSNs handed out before work again.
func (c *Cluster) Start(tb testing.TB) {
	tb.Helper()
	if err := c.start(); err != nil {
		tb.Fatal(err)
	}
}

// DSN returns the URL of a new, empty database on the cluster, dropped
// when tb ends.
func (c *Cluster) DSN(tb testing.TB) string {
	tb.Helper()
	return newDatabase(tb, c.adminDSN("postgres"))
}

// adminDSN is the superuser's URL of database db, over the unix socket.
func (c *Cluster) adminDSN(db string) string {
	q := url.Values{"host": {c.dir}, "port": {port}, "sslmode": {"disable"}}
	return (&url.URL{Scheme: "postgres", User: url.User("postgres"), Path: "/" + db, RawQuery: q.Encode()}).String()
}

func (c *Cluster) logTail() string {
	b, _ := os.ReadFile(filepath.Join(c.dir, "postgres.log"))
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// newDatabase creates a database through admin (a URL whose role may
// CREATE DATABASE) and returns admin's URL pointing at it.
func newDatabase(tb testing.TB, admin string) string {
	tb.Helper()
	u, err := url.Parse(admin)
	if err != nil {
		tb.Fatalf("pgtest: %s is not a URL", EnvDSN)
	}
	var b [6]byte
	rand.Read(b[:]) //nolint:errcheck // never fails
	name := "flakegate_test_" + hex.EncodeToString(b[:])

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		tb.Fatalf("pgtest: connect: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		tb.Fatalf("pgtest: create database (the role needs CREATEDB): %v", err)
	}
	tb.Cleanup(func() { dropDatabase(tb, admin, name) })

	u.Path = "/" + name
	return u.String()
}

func dropDatabase(tb testing.TB, admin, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		// A fault test may leave its server stopped; its cluster goes anyway.
		tb.Logf("pgtest: drop database %s: %v", name, err)
		return
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
		tb.Logf("pgtest: drop database %s: %v", name, err)
	}
}

// A consumer process is the test binary run again by RunConsumers:
// MainWithConsumers runs consumers[$envMode] in it instead of the tests.
const (
	envConsumer = "FLAKEGATE_PG_CONSUMER_DSN"
	envMode     = "FLAKEGATE_PG_CONSUMER_MODE"
	envTries    = "FLAKEGATE_PG_CONSUMER_TRIES"
)

// A Consumer is the loop of one consumer process: it calls WaitForStart,
// then tries to skip one freeze tries times on dsn, printing the runs
// left after every skip counted, and returns its exit code (3 on any
// error other than "no freeze left to skip").
type Consumer func(dsn string, tries int) int

// MainWithConsumers is Main for a test binary whose tests call
// RunConsumers: run again by RunConsumers, it runs the consumer of the
// mode it was given instead of the tests.
func MainWithConsumers(m *testing.M, consumers map[string]Consumer) {
	if dsn := os.Getenv(envConsumer); dsn != "" {
		os.Exit(consumerMain(dsn, consumers))
	}
	Main(m)
}

func consumerMain(dsn string, consumers map[string]Consumer) int {
	// A consumer that hangs (a lost lock) must not hang the test run.
	time.AfterFunc(5*time.Minute, func() {
		fmt.Fprintln(os.Stderr, "consumer: still running after 5 minutes")
		os.Exit(3)
	})
	fn, ok := consumers[os.Getenv(envMode)]
	if !ok {
		fmt.Fprintln(os.Stderr, "consumer: unknown mode", os.Getenv(envMode))
		return 3
	}
	tries, _ := strconv.Atoi(os.Getenv(envTries))
	return fn(dsn, tries)
}

// WaitForStart prints "ready" and waits until the test closes standard
// input, so that every consumer starts at once.
func WaitForStart() {
	fmt.Println("ready")
	io.Copy(io.Discard, os.Stdin) //nolint:errcheck // the start signal is EOF
}

// RunConsumers starts procs consumer processes of the given mode on dsn,
// each trying tries skips, lets them go at once, and returns the runs left
// that the successful skips were told, sorted.
func RunConsumers(t *testing.T, dsn, mode string, procs, tries int) []int {
	t.Helper()
	type proc struct {
		cmd   *exec.Cmd
		stdin io.WriteCloser
		out   *bufio.Scanner
		errb  *strings.Builder
	}
	ps := make([]*proc, procs)
	for i := range ps {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), envConsumer+"="+dsn, envMode+"="+mode, envTries+"="+strconv.Itoa(tries))
		p := &proc{cmd: cmd, errb: &strings.Builder{}}
		cmd.Stderr = p.errb
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if p.stdin, err = cmd.StdinPipe(); err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill() }) //nolint:errcheck // gone already when it passed
		p.out = bufio.NewScanner(stdout)
		ps[i] = p
	}
	for i, p := range ps {
		if !p.out.Scan() || p.out.Text() != "ready" {
			p.cmd.Wait() //nolint:errcheck
			t.Fatalf("process %d did not get ready: %q %s", i, p.out.Text(), p.errb)
		}
	}
	for _, p := range ps {
		p.stdin.Close()
	}
	var told []int
	for i, p := range ps {
		for p.out.Scan() {
			n, err := strconv.Atoi(p.out.Text())
			if err != nil {
				t.Fatalf("process %d printed %q", i, p.out.Text())
			}
			told = append(told, n)
		}
		if err := p.cmd.Wait(); err != nil {
			t.Fatalf("process %d: %v\n%s", i, err, p.errb)
		}
	}
	sort.Ints(told)
	return told
}

// WantEachOnce fails t unless told is 0, 1, ..., runs-1.
func WantEachOnce(t *testing.T, told []int, runs int) {
	t.Helper()
	if len(told) != runs {
		t.Fatalf("%d skips succeeded, want exactly %d", len(told), runs)
	}
	for i, n := range told {
		if n != i {
			t.Fatalf("the runs left the skips were told are not 0..%d once each: %v", runs-1, told)
		}
	}
}
