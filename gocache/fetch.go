// Fetching the modules a go.sum names. A fresh runner's module cache is
// empty, and the attempts build offline: a module the runner's cache
// lacks would be missing from every attempt's view (gocache.go). So,
// before the fill and the suites' listing, flakegate downloads what the
// view lacks, once, in the sandbox:
//
//   - in an empty folder, never a tree: go reads no go.mod, go.work,
//     toolchain line or replace directive of the repository, and runs no
//     code of it. Its arguments are MODULE@VERSION pairs from go.sum
//     lines, each a plain module path and a canonical version
//     (goFetchable), never a flag;
//   - with network only for that command, through flakegate's proxy
//     (a prepare's, docs/sandbox.md) that connects only to the module
//     proxies GOPROXY names and the checksum database GOSUMDB names;
//     GOVCS=*:off, so go never runs git or another version control tool;
//   - GOTOOLCHAIN=local, GOFLAGS and GOWORK empty and off, and none of
//     GOPRIVATE, GONOPROXY, GONOSUMDB or GOINSECURE: every module comes
//     through GOPROXY and is checked against GOSUMDB as the user has it;
//   - into a folder of its own, from which flakegate copies into the
//     view only what hashes to its go.sum line (fillModView), as it
//     copies from the runner's cache.
//
// The candidate's go.sum may name modules the base's does not (a patch
// that adds a dependency): they are fetched the same way, never copied
// from the runner's cache (which may hold another project's private
// modules), into a view of their own that the check's attempts then
// read. Fetching one is fetching code the candidate names, which its
// attempts would run anyway, sandboxed.

package gocache

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/attempt"
	"github.com/flakegate/flakegate/attempt/sandbox"
	"github.com/flakegate/flakegate/internal/diskfull"
	"github.com/flakegate/flakegate/internal/flock"
	"github.com/flakegate/flakegate/internal/lazyre"
)

// goModulePathRe and goVersionRe are what a go.sum line must name for
// flakegate to pass it to go as an argument: a module path that starts
// with a letter or a digit (never a flag), and a canonical version.
var (
	goModulePathRe = lazyre.New(`^[A-Za-z0-9][-A-Za-z0-9._~+/]*$`)
	goVersionRe    = lazyre.New(`^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?(\+incompatible)?$`)
)

// goFetchBudget bounds one download command, and maxFetchOutput what
// it may print (go's -json report of each module).
const (
	goFetchBudget  = 10 * time.Minute
	maxFetchOutput = 64 << 20
)

// goFetchable reports whether a go.sum line's module and version can be
// passed to go, and returns "MODULE@VERSION" and whether the line names
// only the module's go.mod.
func goFetchable(line string) (arg string, goMod, ok bool) {
	f := strings.Fields(line)
	if len(f) != 3 {
		return "", false, false
	}
	mod, ver := f[0], f[1]
	ver, goMod = strings.CutSuffix(ver, "/go.mod")
	if _, ok := escapeModule(mod); !ok || !goModulePathRe.MatchString(mod) || !goVersionRe.MatchString(ver) {
		return "", false, false
	}
	return mod + "@" + ver, goMod, true
}

// missingModLines are the lines of lines whose files view lacks: a
// module's folder, or a go.mod's file.
func missingModLines(view string, lines []string) []string {
	var out []string
	for _, l := range lines {
		f := strings.Fields(l)
		ver, goMod := strings.CutSuffix(f[1], "/go.mod")
		emod, ok1 := escapeModule(f[0])
		ever, ok2 := escapeModule(ver)
		if !ok1 || !ok2 {
			continue
		}
		p := filepath.Join(view, filepath.FromSlash(emod)+"@"+ever)
		if goMod {
			p = filepath.Join(view, "cache", "download", filepath.FromSlash(emod), "@v", ever+".mod")
		}
		if _, err := os.Stat(p); err != nil {
			out = append(out, l)
		}
	}
	return out
}

// goEnvValue is the value of a go variable as go would find it outside
// the sandbox: flakegate's environment, else the user's go env file
// (`go env -w`: GOENV, else $XDG_CONFIG_HOME/go/env, else
// $HOME/.config/go/env); "" when neither sets it.
func goEnvValue(get func(string) (string, bool), name string) string {
	if v, ok := get(name); ok {
		return v
	}
	file, _ := get("GOENV")
	if file == "off" {
		return ""
	}
	if file == "" {
		if x, _ := get("XDG_CONFIG_HOME"); filepath.IsAbs(x) {
			file = filepath.Join(x, "go", "env")
		} else if h, _ := get("HOME"); filepath.IsAbs(h) {
			file = filepath.Join(h, ".config", "go", "env")
		}
	}
	b, err := attempt.ReadBounded(file, 1<<20)
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), name+"="); ok {
			return v
		}
	}
	return ""
}

// goFetchRoute is where a download may connect: the host:port of each
// module proxy GOPROXY names and of the checksum database GOSUMDB names
// (go asks the proxy for it first). why says what keeps it from
// fetching anything ("" when it can).
type goFetchRoute struct {
	proxy, sumdb string
	allow        []string
	why          string
}

// goRoute reads GOPROXY and GOSUMDB as the user has them.
func goRoute(get func(string) (string, bool)) goFetchRoute {
	r := goFetchRoute{proxy: goEnvValue(get, "GOPROXY"), sumdb: goEnvValue(get, "GOSUMDB")}
	proxy := r.proxy
	if proxy == "" {
		proxy = "https://proxy.golang.org,direct"
	}
	add := func(u *url.URL) {
		port := u.Port()
		if port == "" {
			port = "443"
			if u.Scheme == "http" {
				port = "80"
			}
		}
		hp := net.JoinHostPort(strings.ToLower(u.Hostname()), port)
		if !slices.Contains(r.allow, hp) {
			r.allow = append(r.allow, hp)
		}
	}
	for _, p := range strings.FieldsFunc(proxy, func(c rune) bool { return c == ',' || c == '|' }) {
		u, err := url.Parse(strings.TrimSpace(p))
		if err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Hostname() != "" {
			add(u)
		}
	}
	if len(r.allow) == 0 {
		r.why = "GOPROXY=" + shownProxy(proxy) + " names no module proxy (https://...), and flakegate downloads modules only through one"
		return r
	}
	switch f := strings.Fields(r.sumdb); {
	case r.sumdb == "off":
	case len(f) == 0:
		add(&url.URL{Scheme: "https", Host: "sum.golang.org"})
	case len(f) > 1:
		if u, err := url.Parse(f[1]); err == nil && u.Hostname() != "" {
			add(u)
		}
	default:
		name, _, _ := strings.Cut(f[0], "+")
		add(&url.URL{Scheme: "https", Host: name})
	}
	return r
}

// fetchEnv is the download's environment: the attempts' own, its module
// cache the folder cache (a host path, shared read-write), and go's
// variables set so that every module comes through GOPROXY, checked
// against GOSUMDB, and nothing else runs.
func fetchEnv(env []string, cache string, route goFetchRoute) []string {
	drop := []string{"GOMODCACHE", "GOCACHE", "GOFLAGS", "GOPROXY", "GOSUMDB", "GONOSUMDB", "GONOSUMCHECK", "GOPRIVATE",
		"GONOPROXY", "GOINSECURE", "GOTOOLCHAIN", "GOWORK", "GOVCS", "GOENV", "GOAUTH"}
	var out []string
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(drop, name) {
			out = append(out, kv)
		}
	}
	out = append(out, "GOMODCACHE="+cache, "GOCACHE="+sandbox.SandboxTmp+"/go-fetch-build", "GOFLAGS=", "GOTOOLCHAIN=local",
		"GOWORK=off", "GOVCS=*:off", "GOENV=off", "GOAUTH=off")
	if route.proxy != "" {
		out = append(out, "GOPROXY="+route.proxy)
	}
	if route.sumdb != "" {
		out = append(out, "GOSUMDB="+route.sumdb)
	}
	return out
}

// Fetch makes the module view of sb's attempts hold every module the
// base's go.sum names and, when cand is a commit other than the base,
// every module the candidate's go.sum adds (in a view of its own, which
// sb's GoModCache then names; env is the attempts' environment): what
// the runner's cache lacks is downloaded (see the top of this file),
// once per check. It returns the line that says what it fetched, or
// what it could not and what to try ("" when nothing was missing); a
// module it cannot fetch is no error: go says so where it is needed.
func (gc *Caches) Fetch(ctx context.Context, g Repo, sb *sandbox.Sandbox, env []string, cand, op string) (string, error) {
	if gc == nil || sb.GoModCache == "" {
		return "", nil
	}
	var extra []string
	if cand != "" && cand != gc.base {
		mods, err := baseGoModules(ctx, g, cand)
		if err != nil {
			return "", err
		}
		lines, err := goSumLinesAt(ctx, g, cand, mods)
		if err != nil {
			return "", err
		}
		for _, l := range lines {
			if !slices.Contains(gc.lines, l) {
				extra = append(extra, l)
			}
		}
	}
	if gc.fetchTried || len(extra) == 0 && len(missingModLines(gc.modView, gc.lines)) == 0 {
		return "", nil
	}
	gc.fetchTried = true
	if len(extra) > 0 {
		if err := gc.useCandidateView(extra); err != nil {
			return "", &flakegate.Error{Code: flakegate.EINTERNAL, Op: op, Path: gc.mroot, Message: "cannot set up the candidate's Go module view", Err: err}
		}
		sb.GoModCache = gc.modView
	}
	lock, err := flock.Lock(ctx, gc.modView+".fill", flock.Options{What: "the Go module cache's lock", Op: op})
	if err != nil {
		return "", err
	}
	defer lock.Close()
	missing := append(missingModLines(gc.modView, gc.lines), missingModLines(gc.modView, extra)...)
	if len(missing) == 0 {
		return "", nil
	}
	line, err := gc.download(ctx, *sb, env, missing, len(extra) > 0, op)
	if err != nil {
		return "", err
	}
	if gc.named, gc.found, err = fillModView(gc.modView, nil, gc.lines); err != nil {
		return "", &flakegate.Error{Code: flakegate.EINTERNAL, Op: op, Path: gc.modView, Message: "cannot read the Go module view", Err: err}
	}
	return line, nil
}

// useCandidateView makes the check's module view one that holds the
// base's modules and the lines extra the candidate's go.sum adds: the
// base's are copied from the base's view (or the runner's cache), the
// candidate's are only ever downloaded.
func (gc *Caches) useCandidateView(extra []string) error {
	all := append(slices.Clone(gc.lines), extra...)
	slices.Sort(all)
	view := filepath.Join(gc.mroot, flakegate.SHA256Hex([]byte(strings.Join(all, "\n")))[:32])
	if err := os.MkdirAll(view, 0o755); err != nil {
		return err
	}
	f, err := holdShared(view + ".lock")
	if err != nil {
		return err
	}
	gc.held = append(gc.held, f)
	now := time.Now()
	os.Chtimes(view, now, now)
	if _, _, err := fillModView(view, []string{gc.modView, gc.host}, gc.lines); err != nil {
		return err
	}
	gc.modView = view
	return nil
}

// fetched is one module a download command reported: its
// MODULE@VERSION and go's error for it ("" when it came).
type fetched struct {
	arg, err string
}

// download downloads the modules of lines (missing from the view) in
// a copy of the attempts' sandbox sb (env their environment) and copies
// into the view what hashes to its line; it
// returns the line that says what happened.
func (gc *Caches) download(ctx context.Context, sb sandbox.Sandbox, env []string, lines []string, cand bool, op string) (string, error) {
	var zips, mods []string
	for _, l := range lines {
		arg, goMod, ok := goFetchable(l)
		switch {
		case !ok:
		case goMod && !slices.Contains(mods, arg):
			mods = append(mods, arg)
		case !goMod && !slices.Contains(zips, arg):
			zips = append(zips, arg)
		}
	}
	// A module whose files are fetched brings its go.mod with it.
	mods = slices.DeleteFunc(mods, func(a string) bool { return slices.Contains(zips, a) })
	whose := "the base's go.sum names"
	if cand {
		whose = "the base's and the candidate's go.sum name"
	}
	n := len(zips) + len(mods)
	lacks := fmt.Sprintf("the module cache lacks %s %s", count(n, "module", "modules"), whose)
	route := gc.route
	switch {
	case n == 0:
		return "Go modules: " + lacks + ", none of them a module path and version go could fetch", nil
	case !sb.Level.Root:
		return "Go modules: " + lacks + " (" + strings.Join(firstN(append(zips, mods...), 3), ", ") + "), and flakegate downloads modules only as root " +
			"(its download's network needs a namespace only root can serve); try: go mod download in each module first " +
			"(the check copies from your module cache what matches go.sum), or run flakegate as root", nil
	case route.why != "":
		return "Go modules: " + lacks + ": " + route.why + "; try: set GOPROXY (the default is https://proxy.golang.org,direct)", nil
	}
	root := filepath.Join(filepath.Dir(gc.mroot), "gomod-fetch")
	if err := os.MkdirAll(root, 0o700); err != nil {
		return "", diskfull.Error(err, root, "cannot create the Go module download's folder")
	}
	lock, err := flock.Lock(ctx, root+".lock", flock.Options{What: "the Go module download's lock", Op: op})
	if err != nil {
		return "", err
	}
	defer lock.Close()
	makeRemovable(root)
	keepOnly(root, "") // a download a killed check left
	tree, cache := filepath.Join(root, "empty"), filepath.Join(root, "cache")
	defer func() { makeRemovable(root); keepOnly(root, "") }()
	for _, d := range []string{tree, cache} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return "", diskfull.Error(err, d, "cannot create the Go module download's folder")
		}
	}
	sb.Tree = tree
	sb.GoCache, sb.FillGoCache, sb.GoModCache, sb.Prepared, sb.Persist = "", false, "", "", ""
	sb.RO, sb.RW, sb.Network = nil, []string{cache}, false
	sb.Outbound = &sandbox.Outbound{Allow: route.allow}
	env = fetchEnv(env, cache, route)
	started := time.Now()
	var got []fetched
	for _, cmd := range [][]string{{"go", "mod", "download", "-json"}, {"go", "list", "-m", "-e", "-json"}} {
		args := zips
		if cmd[1] == "list" {
			args = mods
		}
		if len(args) == 0 {
			continue
		}
		out := &attempt.Bounded{Max: maxFetchOutput}
		o := attempt.Run(ctx, attempt.Command{Argv: append(cmd, args...), Dir: tree, Env: env, WallBudget: goFetchBudget, Sandbox: &sb,
			NoTestMarkers: []string{}, Output: out})
		if ctx.Err() != nil {
			return "", flakegate.Interrupted(ctx)
		}
		rep := parseFetched(out.Bytes())
		if len(rep) == 0 && o.Result != attempt.Pass {
			why := strings.TrimSpace(o.Result + " " + o.Reason)
			if l := goErrorLine(o.Tail); l != "" {
				why = l
			}
			for _, a := range args {
				rep = append(rep, fetched{arg: a, err: why})
			}
		}
		got = append(got, rep...)
	}
	if _, _, err := fillModView(gc.modView, []string{cache}, lines); err != nil {
		return "", &flakegate.Error{Code: flakegate.EINTERNAL, Op: op, Path: gc.modView, Message: "cannot copy the downloaded Go modules", Err: err}
	}
	return fetchLine(missingModLines(gc.modView, lines), got, n, whose, route, time.Since(started)), nil
}

// fetchLine says what a download did: how many of n modules came, or
// which could not and what to try. left are the lines still missing
// from the view; got what go reported of each module.
func fetchLine(left []string, got []fetched, n int, whose string, route goFetchRoute, took time.Duration) string {
	via := strings.Join(route.allow, ", ")
	if len(left) == 0 {
		return fmt.Sprintf("Go modules: downloaded the %s %s that the module cache lacked, in the sandbox through %s, each checked against go.sum (%.1f s)",
			count(n, "module", "modules"), whose, via, took.Seconds())
	}
	var names []string
	why := ""
	for _, l := range left {
		arg, _, ok := goFetchable(l)
		if !ok || slices.Contains(names, arg) {
			continue
		}
		names = append(names, arg)
		for _, g := range got {
			if g.arg == arg && g.err != "" && why == "" {
				why = g.err
			}
		}
	}
	if why == "" {
		why = "what came does not hash to its go.sum line"
	}
	more := ""
	if len(names) > 1 {
		more = fmt.Sprintf(" (and %d more)", len(names)-1)
	}
	first := ""
	if len(names) > 0 {
		first = names[0]
	}
	return fmt.Sprintf("Go modules: cannot download %s%s, which %s: %s; try: go mod download %s on this machine with GOPROXY=%s "+
		"(the download reaches only %s, checks GOSUMDB and has no credentials, so a private module must come from the runner's module cache)",
		first, more, whose, oneLineCut(why, 200), first, shownProxy(orDefault(route.proxy, "https://proxy.golang.org,direct")), via)
}

// shownProxy is GOPROXY as a line may show it: a URL's user and
// password (a private proxy's token) left out.
func shownProxy(proxy string) string {
	parts := strings.FieldsFunc(proxy, func(c rune) bool { return c == ',' || c == '|' })
	for i, p := range parts {
		if u, err := url.Parse(p); err == nil && u.User != nil {
			u.User = nil
			parts[i] = u.String()
		}
	}
	return strings.Join(parts, ",")
}

// parseFetched reads go mod download -json and go list -m -e -json: one
// object per module, its Error a string (download) or an object with
// Err (list).
func parseFetched(out []byte) []fetched {
	var got []fetched
	var obj bytes.Buffer
	in := false
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		switch {
		case l == "{":
			in = true
			obj.Reset()
		case !in:
			continue
		}
		obj.WriteString(l + "\n")
		if l != "}" {
			continue
		}
		in = false
		var m struct {
			Path, Version string
			Error         json.RawMessage
		}
		if json.Unmarshal(obj.Bytes(), &m) != nil || m.Path == "" {
			continue
		}
		f := fetched{arg: m.Path + "@" + m.Version}
		var s string
		var e struct{ Err string }
		if json.Unmarshal(m.Error, &s) == nil {
			f.err = s
		} else if json.Unmarshal(m.Error, &e) == nil {
			f.err = e.Err
		}
		got = append(got, f)
	}
	return got
}

// goErrorLine is the first line of go's output that says what went
// wrong ("go: ..."), with the noise go prints in a sandbox left out.
func goErrorLine(out string) string {
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "go: ") && !strings.Contains(l, "telemetry") && !strings.HasPrefix(l, "go: downloading") {
			return l
		}
	}
	return ""
}

// oneLineCut is s on one line, cut at n bytes.
func oneLineCut(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		s = s[:n] + "..."
	}
	return s
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// firstN is the first n of xs.
func firstN(xs []string, n int) []string {
	if len(xs) > n {
		return append(slices.Clone(xs[:n]), fmt.Sprintf("%d more", len(xs)-n))
	}
	return xs
}

// goDownloadingRe is go's note of a module it is about to download.
var goDownloadingRe = lazyre.New(`^go: downloading (\S+) (v\S+)$`)

// goPlainLines are go's output as plain lines: a go test -json event's
// Output, else the line itself, without what go prints in any sandbox
// that says nothing of the failure (its telemetry child).
func goPlainLines(out string) []string {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		var ev struct{ Output *string }
		if strings.HasPrefix(l, "{") && json.Unmarshal([]byte(l), &ev) == nil && ev.Output != nil {
			l = *ev.Output
		}
		for _, x := range strings.Split(l, "\n") {
			x = strings.TrimRight(x, "\r")
			if strings.TrimSpace(x) != "" && !strings.Contains(x, "telemetry child process") {
				lines = append(lines, x)
			}
		}
	}
	return lines
}

// MissingModule is the module a failed go command in the sandbox could
// not find in its module cache ("MODULE@VERSION"), "" for none: it said
// it was downloading it, and then that the (read-only) cache or
// GOPROXY=off stopped it.
func MissingModule(out string) string {
	lines := goPlainLines(out)
	stopped := slices.ContainsFunc(lines, func(l string) bool {
		return strings.Contains(l, "module lookup disabled by GOPROXY=off") ||
			strings.Contains(l, sandbox.SandboxGoModCache+"/cache") && strings.Contains(l, "read-only file system")
	})
	if !stopped {
		return ""
	}
	for _, l := range lines {
		if m := goDownloadingRe.FindStringSubmatch(strings.TrimSpace(l)); m != nil {
			return m[1] + "@" + m[2]
		}
	}
	for _, l := range lines {
		if i := strings.Index(l, ": module lookup disabled"); i >= 0 {
			f := strings.Fields(l[:i])
			if len(f) > 0 {
				return f[len(f)-1]
			}
		}
	}
	return "a module"
}

// Failure is a failed go command's output in one line: the module
// the module cache lacks, else its last n lines without go's noise.
func Failure(out string, n int) string {
	if m := MissingModule(out); m != "" {
		return "the module cache lacks " + m + " (the \"Go modules:\" line above says why)"
	}
	var lines []string
	for _, l := range goPlainLines(out) {
		if !goDownloadingRe.MatchString(strings.TrimSpace(l)) {
			lines = append(lines, strings.TrimSpace(l))
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	if len(lines) == 0 {
		return "(no output)"
	}
	return oneLineCut(strings.Join(lines, " | "), 400)
}
