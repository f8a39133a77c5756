// Package git runs the git binary for flakegate: it resolves revisions,
// reads files at a revision, lists the paths a patch touches and keeps the
// clean worktrees that base replays and candidate attempts run in.
//
// Every call is one git process started with an argv, never a shell. Git
// never prompts (GIT_TERMINAL_PROMPT=0) and never runs the repository's
// hooks or fsmonitor command: a candidate patch must not get to run code
// through flakegate's own checkouts. A checkout holds the committed bytes
// whatever the user's line-end settings, so a fixture digest taken in it
// is the same on every machine.
package git

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/flakegate/flakegate"
)

// Client runs git in one repository or worktree.
type Client struct {
	// Dir is the repository or worktree git runs in ("" is the current
	// directory).
	Dir string
	// Git is the git binary; "" means "git" found on PATH.
	Git string
	// Command builds the process for one git call; nil means
	// exec.CommandContext. Tests replace it to record or fake calls. The
	// client then sets the command's Dir, streams and cancellation, and
	// filters its Env (os.Environ() when the constructor left it nil).
	Command func(ctx context.Context, name string, args ...string) *exec.Cmd

	filtersOnce sync.Once
	filterArgs  []string // -c settings that switch off the repository's filter drivers
	// known are commits RevParse verified, by their full hash (a hash
	// names the same commit for as long as the client lives; a branch or
	// tag name is asked again every time), and common is CommonDir's
	// answer: a check asks both many times.
	knownMu sync.Mutex
	known   map[string]bool
	common  string
	files   map[string][]string // ListFiles' answers by commit hash

	// indexFile, when set, is the index git reads and writes instead of
	// the repository's (CommitWorkTree's temporary one).
	indexFile string
}

// GitError is a git process that did not succeed.
type GitError struct {
	Args     []string // the git arguments, after the binary and the -c safety settings
	ExitCode int      // -1 if git did not start or was killed by a signal
	Stderr   string   // git's stderr, trimmed
	Err      error    // the error from os/exec
}

func (e *GitError) Error() string {
	s := "git " + strings.Join(e.Args, " ")
	if e.ExitCode >= 0 {
		s += fmt.Sprintf(": exit status %d", e.ExitCode)
	} else if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	if e.Stderr != "" {
		s += ": " + e.Stderr
	}
	return s
}

func (e *GitError) Unwrap() error { return e.Err }

// safetyConfig is passed to every git call, over any user or repository
// config: no repository hook and no fsmonitor command ever runs under
// flakegate, and a checkout writes the committed bytes (only the
// repository's .gitattributes may convert line ends, never a user's
// core.autocrlf), without touching submodules.
var safetyConfig = []string{
	"-c", "core.hooksPath=/dev/null",
	"-c", "core.fsmonitor=false",
	"-c", "core.attributesFile=/dev/null",
	"-c", "core.autocrlf=false",
	"-c", "core.eol=lf",
	"-c", "submodule.recurse=false",
}

// repoEnv lists variables that would point git at another repository than
// Dir (they are set, for example, when flakegate runs inside a git hook),
// or add configuration and attributes behind flakegate's back.
var repoEnv = map[string]bool{
	"GIT_DIR": true, "GIT_WORK_TREE": true, "GIT_INDEX_FILE": true,
	"GIT_COMMON_DIR": true, "GIT_OBJECT_DIRECTORY": true,
	"GIT_ALTERNATE_OBJECT_DIRECTORIES": true, "GIT_NAMESPACE": true,
	"GIT_PREFIX": true, "GIT_CONFIG": true, "GIT_CONFIG_PARAMETERS": true,
	"GIT_CONFIG_COUNT": true, "GIT_CONFIG_SYSTEM": true, "GIT_CONFIG_GLOBAL": true,
	"GIT_CONFIG_NOSYSTEM": true, "GIT_ATTR_NOSYSTEM": true, "GIT_ATTR_SOURCE": true,
	"GIT_TERMINAL_PROMPT": true,
}

// fixedEnv is set on every git call: no prompt, and neither the system's
// nor the user's config or attributes (only the repository's own config,
// whose filter drivers are switched off, see filters).
var fixedEnv = []string{
	"GIT_TERMINAL_PROMPT=0",
	"GIT_CONFIG_NOSYSTEM=1",
	"GIT_CONFIG_GLOBAL=/dev/null",
	"GIT_ATTR_NOSYSTEM=1",
}

// env returns base (os.Environ() if nil) without repoEnv, plus fixedEnv.
func env(base []string) []string {
	if base == nil {
		base = os.Environ()
	}
	env := make([]string, 0, len(base)+len(fixedEnv))
	for _, kv := range base {
		name, _, _ := strings.Cut(kv, "=")
		if repoEnv[name] || strings.HasPrefix(name, "GIT_CONFIG_KEY_") || strings.HasPrefix(name, "GIT_CONFIG_VALUE_") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, fixedEnv...)
}

// filters returns -c settings that switch off every filter driver the
// repository's config defines (smudge, clean and process commands emptied,
// required off), so that no attribute, committed or planted, makes
// flakegate's own checkout run a program or write other bytes than the
// committed ones. Read once per client.
func (c *Client) filters(ctx context.Context) []string {
	c.filtersOnce.Do(func() {
		out, err := c.exec(ctx, "", nil, nil, "config", "--name-only", "--get-regexp", `^filter\.`)
		if err != nil {
			return // exit 1: none defined
		}
		seen := map[string]bool{}
		for _, key := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			i := strings.LastIndexByte(key, '.')
			if i <= len("filter.") {
				continue
			}
			name := key[len("filter."):i]
			if seen[name] {
				continue
			}
			seen[name] = true
			for _, k := range []string{"smudge=", "clean=", "process=", "required=false"} {
				c.filterArgs = append(c.filterArgs, "-c", "filter."+name+"."+k)
			}
		}
	})
	return c.filterArgs
}

// run runs git with args in dir (c.Dir if dir is "") and returns stdout.
func (c *Client) run(ctx context.Context, dir string, args ...string) ([]byte, error) {
	return c.exec(ctx, dir, c.filters(ctx), nil, args...)
}

// runInput is run with stdin as git's standard input.
func (c *Client) runInput(ctx context.Context, dir string, stdin []byte, args ...string) ([]byte, error) {
	return c.exec(ctx, dir, c.filters(ctx), stdin, args...)
}

// exec is run with the given extra -c settings and standard input (none
// when stdin is nil).
func (c *Client) exec(ctx context.Context, dir string, extra []string, stdin []byte, args ...string) ([]byte, error) {
	if dir == "" {
		dir = c.Dir
	}
	name := c.Git
	if name == "" {
		name = "git"
	}
	argv := append([]string{}, safetyConfig...)
	argv = append(argv, extra...)
	argv = append(argv, args...)
	newCmd := c.Command
	if newCmd == nil {
		newCmd = exec.CommandContext
	}
	cmd := newCmd(ctx, name, argv...)
	cmd.Dir = dir
	cmd.Env = env(cmd.Env)
	if c.indexFile != "" {
		cmd.Env = append(cmd.Env, "GIT_INDEX_FILE="+c.indexFile)
	}
	// On cancellation ask git to stop (it removes its lock files on
	// SIGTERM, so the next run does not find a stale index.lock); kill
	// it only if it does not exit soon.
	if cmd.Cancel != nil { // made by exec.CommandContext
		cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
		cmd.WaitDelay = 5 * time.Second
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdin = nil
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, ctxErr
		}
		ge := &GitError{Args: args, ExitCode: -1, Stderr: strings.TrimSpace(stderr.String()), Err: err}
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			ge.ExitCode = ee.ExitCode()
		}
		return nil, ge
	}
	return stdout.Bytes(), nil
}

// exitCode returns the exit code of a *GitError in err's chain, or -1.
func exitCode(err error) int {
	var ge *GitError
	if errors.As(err, &ge) {
		return ge.ExitCode
	}
	return -1
}

// checkRev rejects revisions git would read as an option.
func checkRev(rev string) error {
	if rev == "" {
		return &flakegate.Error{Code: flakegate.EINVALID, Op: "git rev-parse", Message: "empty revision", Hint: "pass a commit, branch or tag"}
	}
	if strings.HasPrefix(rev, "-") {
		return &flakegate.Error{Code: flakegate.EINVALID, Op: "git rev-parse", Message: fmt.Sprintf("revision %q starts with '-'", rev)}
	}
	return nil
}

// RevParse returns the full hash of the commit rev names. A rev that does
// not name a commit is an EINVALID error that names it.
func (c *Client) RevParse(ctx context.Context, rev string) (string, error) {
	if err := checkRev(rev); err != nil {
		return "", err
	}
	if c.isKnown(rev) {
		return rev, nil
	}
	out, err := c.run(ctx, "", "rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{commit}")
	if err != nil {
		if exitCode(err) == 1 {
			return "", &flakegate.Error{
				Code:    flakegate.EINVALID,
				Op:      "git rev-parse",
				Message: fmt.Sprintf("revision %q does not name a commit", rev),
				Hint:    "fetch it (git fetch origin " + rev + ") or pass a full commit hash",
			}
		}
		return "", wrapRepoErr("git rev-parse", c.Dir, err)
	}
	sha := strings.TrimSpace(string(out))
	c.knownMu.Lock()
	if c.known == nil {
		c.known = map[string]bool{}
	}
	c.known[sha] = true
	c.knownMu.Unlock()
	return sha, nil
}

// isKnown says whether rev is the full hash of a commit RevParse
// verified already.
func (c *Client) isKnown(rev string) bool {
	c.knownMu.Lock()
	defer c.knownMu.Unlock()
	return c.known[rev]
}

// Show returns the bytes of file (a repo-relative, slash-separated path)
// at rev, exactly as committed: no smudge filter, no end-of-line
// conversion, no textconv (`git cat-file blob`). A file absent at rev is
// ENOTFOUND; a path that names a folder is EINVALID; a rev that does not
// resolve is EINVALID.
func (c *Client) Show(ctx context.Context, rev, file string) ([]byte, error) {
	clean, err := cleanRepoPath(file)
	if err != nil {
		return nil, err
	}
	sha, err := c.RevParse(ctx, rev)
	if err != nil {
		return nil, err
	}
	obj := sha + ":" + clean
	out, err := c.run(ctx, "", "cat-file", "blob", obj)
	if err == nil {
		return out, nil
	}
	if exitCode(err) != 128 {
		return nil, err
	}
	kind, terr := c.run(ctx, "", "cat-file", "-t", obj)
	if terr != nil {
		return nil, &flakegate.Error{
			Code:    flakegate.ENOTFOUND,
			Op:      "git show",
			Path:    clean,
			Message: fmt.Sprintf("no such file at %s (%s)", rev, flakegate.ShortSHA(sha)),
		}
	}
	return nil, &flakegate.Error{
		Code:    flakegate.EINVALID,
		Op:      "git show",
		Path:    clean,
		Message: fmt.Sprintf("is a %s at %s, not a file", strings.TrimSpace(string(kind)), rev),
	}
}

// DiffNames lists the paths that differ between the commits base and cand,
// as `git diff --name-only --no-renames -z` does: a rename lists both the
// old and the new path. It runs the plumbing diff-tree so that no diff
// setting in the user's or the repository's config can hide a path.
func (c *Client) DiffNames(ctx context.Context, base, cand string) ([]string, error) {
	baseSHA, err := c.RevParse(ctx, base)
	if err != nil {
		return nil, err
	}
	candSHA, err := c.RevParse(ctx, cand)
	if err != nil {
		return nil, err
	}
	out, err := c.run(ctx, "", "diff-tree", "-r", "--name-only", "--no-renames", "--no-ext-diff", "--ignore-submodules=none", "-z", baseSHA, candSHA, "--")
	if err != nil {
		return nil, err
	}
	names := []string{}
	for _, p := range bytes.Split(out, []byte{0}) {
		if len(p) > 0 {
			names = append(names, string(p))
		}
	}
	return names, nil
}

// TopLevel returns the absolute root of the work tree Dir is in.
func (c *Client) TopLevel(ctx context.Context) (string, error) {
	out, err := c.run(ctx, "", "rev-parse", "--show-toplevel")
	if err != nil {
		return "", wrapRepoErr("git rev-parse --show-toplevel", c.Dir, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// Branch returns the short name of the branch HEAD is on, "" when HEAD
// is detached.
func (c *Client) Branch(ctx context.Context) (string, error) {
	out, err := c.run(ctx, "", "symbolic-ref", "-q", "--short", "HEAD")
	if err != nil {
		if exitCode(err) == 1 {
			return "", nil // detached
		}
		return "", wrapRepoErr("git symbolic-ref --short HEAD", c.Dir, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// CommonDir returns the absolute git directory shared by the repository
// and all its worktrees (where flakegate keeps its default ledger).
func (c *Client) CommonDir(ctx context.Context) (string, error) {
	c.knownMu.Lock()
	common := c.common
	c.knownMu.Unlock()
	if common != "" {
		return common, nil
	}
	out, err := c.run(ctx, "", "rev-parse", "--path-format=absolute", "--git-common-dir")
	if err != nil {
		return "", wrapRepoErr("git rev-parse --git-common-dir", c.Dir, err)
	}
	dir := strings.TrimSpace(string(out))
	if !filepath.IsAbs(dir) {
		// Older git ignores --path-format and answers relative to Dir.
		base, err := filepath.Abs(c.Dir)
		if err != nil {
			return "", err
		}
		dir = filepath.Join(base, dir)
	}
	dir = filepath.Clean(dir)
	c.knownMu.Lock()
	c.common = dir
	c.knownMu.Unlock()
	return dir, nil
}

// wrapRepoErr turns "not a git repository" (exit 128) into an EINVALID
// error users can act on; other failures stay *GitError.
func wrapRepoErr(op, dir string, err error) error {
	if exitCode(err) != 128 {
		return err
	}
	if dir == "" {
		dir = "."
	}
	// git's own line says why; the command and exit status are in Op.
	var ge *GitError
	if errors.As(err, &ge) && ge.Stderr != "" {
		err = errors.New(ge.Stderr)
	}
	return &flakegate.Error{Code: flakegate.EINVALID, Op: op, Path: dir, Message: "not a usable git repository", Hint: "run flakegate inside the repository's work tree", Err: err}
}

// cleanRepoPath cleans a repo-relative, slash-separated path and rejects
// one that is absolute or climbs out of the repository.
func cleanRepoPath(p string) (string, error) {
	clean := path.Clean(p)
	if p == "" || clean == "." || strings.HasPrefix(clean, "/") || clean == ".." || strings.HasPrefix(clean, "../") {
		return "", &flakegate.Error{Code: flakegate.EINVALID, Op: "git show", Path: p, Message: "not a repo-relative file path"}
	}
	return clean, nil
}

// ListFiles lists the files committed at rev (repo-relative,
// slash-separated), as `git ls-tree -r --name-only -z` does.
func (c *Client) ListFiles(ctx context.Context, rev string) ([]string, error) {
	sha, err := c.RevParse(ctx, rev)
	if err != nil {
		return nil, err
	}
	c.knownMu.Lock()
	kept, ok := c.files[sha]
	c.knownMu.Unlock()
	if ok {
		return slices.Clone(kept), nil // a commit's files never change
	}
	out, err := c.run(ctx, "", "ls-tree", "-r", "--name-only", "--full-tree", "-z", sha)
	if err != nil {
		return nil, err
	}
	names := []string{}
	for _, p := range bytes.Split(out, []byte{0}) {
		if len(p) > 0 {
			names = append(names, string(p))
		}
	}
	c.knownMu.Lock()
	if c.files == nil {
		c.files = map[string][]string{}
	}
	c.files[sha] = names
	c.knownMu.Unlock()
	return slices.Clone(names), nil
}

// CheckoutSize is what a checkout of rev takes on a file system that
// gives each file whole pages of pageSize bytes (a tmpfs): the sum of
// its blobs' sizes, each rounded up to a page, and a page for a symlink
// or a submodule's empty folder. git's own folder is not counted.
func (c *Client) CheckoutSize(ctx context.Context, rev string, pageSize int64) (int64, error) {
	sha, err := c.RevParse(ctx, rev)
	if err != nil {
		return 0, err
	}
	out, err := c.run(ctx, "", "ls-tree", "-r", "-l", "--full-tree", "-z", sha)
	if err != nil {
		return 0, err
	}
	var total int64
	for _, e := range bytes.Split(out, []byte{0}) {
		// "<mode> <type> <object> <size>\t<path>"; size "-" for a submodule.
		meta, _, ok := bytes.Cut(e, []byte{'\t'})
		if !ok {
			continue
		}
		f := bytes.Fields(meta)
		if len(f) != 4 {
			continue
		}
		n, err := strconv.ParseInt(string(f[3]), 10, 64)
		if err != nil || n < 0 {
			n = 0
		}
		total += max(pageSize, (n+pageSize-1)/pageSize*pageSize)
	}
	return total, nil
}
