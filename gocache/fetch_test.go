package gocache

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestGoFetchable: only a plain module path and a canonical version go
// to go as an argument: never a flag, a query or a path.
func TestGoFetchable(t *testing.T) {
	for line, want := range map[string]string{
		"github.com/google/go-cmp v0.6.0 h1:x":                          "github.com/google/go-cmp@v0.6.0",
		"github.com/google/go-cmp v0.6.0/go.mod h1:x":                   "github.com/google/go-cmp@v0.6.0",
		"golang.org/x/sys v0.0.0-20200116001909-b77594299b42 h1:x":      "golang.org/x/sys@v0.0.0-20200116001909-b77594299b42",
		"github.com/Azure/go-autorest v14.2.0+incompatible/go.mod h1:x": "github.com/Azure/go-autorest@v14.2.0+incompatible",
		"-modfile=/etc/passwd v1.0.0 h1:x":                              "",
		"example.com/x latest h1:x":                                     "",
		"example.com/x v1.0.0-../../x h1:x":                             "",
		"example.com/x master h1:x":                                     "",
		"../escape v1.0.0 h1:x":                                         "",
		"example.com/x v1.0.0 -json h1:x":                               "",
	} {
		arg, _, ok := goFetchable(line)
		if (want == "") == ok || arg != want {
			t.Errorf("%q: %q %v, want %q", line, arg, ok, want)
		}
	}
}

// TestGoRoute: the download reaches the module proxies GOPROXY names
// and the checksum database, and nothing when GOPROXY names no proxy.
func TestGoRoute(t *testing.T) {
	env := func(kv ...string) func(string) (string, bool) {
		return getter(append([]string{"HOME=/nonexistent"}, kv...))
	}
	r := goRoute(env())
	if strings.Join(r.allow, " ") != "proxy.golang.org:443 sum.golang.org:443" || r.why != "" {
		t.Errorf("default: %+v", r)
	}
	r = goRoute(env("GOPROXY=https://goproxy.example:8443/mirror|http://other.example,direct", "GOSUMDB=off"))
	if strings.Join(r.allow, " ") != "goproxy.example:8443 other.example:80" {
		t.Errorf("listed proxies: %+v", r)
	}
	r = goRoute(env("GOSUMDB=sum.example+abc https://sum.example:9443"))
	if !slices.Contains(r.allow, "sum.example:9443") {
		t.Errorf("GOSUMDB with a URL: %+v", r)
	}
	for _, p := range []string{"direct", "off", "file:///srv/mods"} {
		if r := goRoute(env("GOPROXY=" + p)); r.why == "" || len(r.allow) > 0 {
			t.Errorf("GOPROXY=%s: %+v", p, r)
		}
	}
	// `go env -w` writes the user's go env file; the environment wins.
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, ".config", "go"), 0o755)
	os.WriteFile(filepath.Join(home, ".config", "go", "env"), []byte("GOFLAGS=-x\nGOPROXY=https://corp.example/go\n"), 0o644)
	if r := goRoute(getter([]string{"HOME=" + home})); r.proxy != "https://corp.example/go" {
		t.Errorf("from the go env file: %+v", r)
	}
	if r := goRoute(getter([]string{"HOME=" + home, "GOPROXY=https://env.example"})); r.proxy != "https://env.example" {
		t.Errorf("the environment over the file: %+v", r)
	}
}

// TestFetchEnv: the download's go gets the proxy and checksum database
// the user has, and nothing that would skip the checksum database, use
// a version control tool, a workspace or another toolchain.
func TestFetchEnv(t *testing.T) {
	env := fetchEnv([]string{"PATH=/usr/bin", "GOFLAGS=-insecure", "GONOSUMDB=*", "GOPRIVATE=*", "GOINSECURE=*", "GOMODCACHE=/sandbox/gomod", "GOTOOLCHAIN=auto"},
		"/x/cache", goFetchRoute{proxy: "https://p.example", sumdb: "sum.golang.org"})
	got := strings.Join(env, " ")
	for _, want := range []string{"PATH=/usr/bin", "GOMODCACHE=/x/cache", "GOFLAGS= ", "GOTOOLCHAIN=local", "GOWORK=off", "GOVCS=*:off", "GOPROXY=https://p.example", "GOSUMDB=sum.golang.org"} {
		if !strings.Contains(got+" ", want) {
			t.Errorf("missing %q in %s", want, got)
		}
	}
	for _, bad := range []string{"-insecure", "GONOSUMDB", "GOPRIVATE", "GOINSECURE", "/sandbox/gomod", "auto"} {
		if strings.Contains(got, bad) {
			t.Errorf("%q in %s", bad, got)
		}
	}
}

// TestParseFetched: each module's error, from go mod download -json
// (a string) and go list -m -e -json (an object), whatever else is on
// the output.
func TestParseFetched(t *testing.T) {
	out := "can't start telemetry child process\n{\n\t\"Path\": \"a.example/m\",\n\t\"Version\": \"v1.0.0\",\n\t\"Dir\": \"/x\"\n}\n" +
		"{\n\t\"Path\": \"b.example/m\",\n\t\"Version\": \"v1.0.0\",\n\t\"Error\": \"b.example/m@v1.0.0: 404 Not Found\"\n}\n" +
		"{\n\t\"Path\": \"c.example/m\",\n\t\"Version\": \"v2.0.0\",\n\t\"Error\": {\n\t\t\"Err\": \"c: 410 Gone\"\n\t}\n}\n"
	got := parseFetched([]byte(out))
	want := []fetched{{"a.example/m@v1.0.0", ""}, {"b.example/m@v1.0.0", "b.example/m@v1.0.0: 404 Not Found"}, {"c.example/m@v2.0.0", "c: 410 Gone"}}
	if !slices.Equal(got, want) {
		t.Errorf("got %+v", got)
	}
}

// TestGoFailure: a go command that stopped at a module its cache lacks
// says which, in one line; other failures keep go's last lines without
// its sandbox noise, -json events read as their output.
func TestGoFailure(t *testing.T) {
	ro := "can't start telemetry child process: fork/exec /usr/local/go/bin/go: operation not permitted\ngo: downloading github.com/google/go-cmp v0.6.0\n" +
		`{"ImportPath":"github.com/google/go-cmp/cmp","Action":"build-output","Output":"clamp_test.go:6:2: mkdir /sandbox/gomod/cache: read-only file system\n"}` + "\n"
	if got := Failure(ro, 5); got != `the module cache lacks github.com/google/go-cmp@v0.6.0 (the "Go modules:" line above says why)` {
		t.Errorf("read-only cache: %q", got)
	}
	off := "x_test.go:6:2: example.com/dep@v1.2.3: module lookup disabled by GOPROXY=off\nFAIL\tm [setup failed]\n"
	if got := MissingModule(off); got != "example.com/dep@v1.2.3" {
		t.Errorf("GOPROXY=off: %q", got)
	}
	other := "can't start telemetry child process: x\n# m\n./a.go:3:1: syntax error\nFAIL\tm [build failed]\n"
	if got := Failure(other, 2); got != "./a.go:3:1: syntax error | FAIL m [build failed]" {
		t.Errorf("build failure: %q", got)
	}
}

// TestShownProxy: a line never shows a proxy's credentials.
func TestShownProxy(t *testing.T) {
	if got := shownProxy("https://me:s3cret-token@goproxy.corp.example/go,direct"); got != "https://goproxy.corp.example/go,direct" {
		t.Errorf("%q", got)
	}
	line := fetchLine([]string{"a.example/m v1.0.0 h1:x"}, []fetched{{"a.example/m@v1.0.0", "404 Not Found"}}, 1, "the base's go.sum names",
		goFetchRoute{proxy: "https://me:s3cret-token@goproxy.corp.example/go", allow: []string{"goproxy.corp.example:443"}}, 0)
	if strings.Contains(line, "s3cret") || !strings.Contains(line, "cannot download a.example/m@v1.0.0") || !strings.Contains(line, "404 Not Found") {
		t.Errorf("%s", line)
	}
}

// getter looks a variable up in env ("NAME=value"), the last one
// winning, as the check's environment getter does.
func getter(env []string) func(string) (string, bool) {
	vars := map[string]string{}
	for _, kv := range env {
		name, value, _ := strings.Cut(kv, "=")
		vars[name] = value
	}
	return lookup(vars)
}
