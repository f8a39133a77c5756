package sandbox

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"
)

func TestNotPublic(t *testing.T) {
	own := map[netip.Addr]bool{netip.MustParseAddr("203.0.114.7"): true}
	for addr, want := range map[string]string{
		"127.0.0.1":        "a loopback address",
		"127.8.9.10":       "a loopback address",
		"::1":              "a loopback address",
		"::ffff:127.0.0.1": "a loopback address",
		"10.1.2.3":         "a private address",
		"172.16.0.1":       "a private address",
		"192.168.1.1":      "a private address",
		"fd00::1":          "a private address",
		"169.254.169.254":  "a link-local address",
		"fe80::1":          "a link-local address",
		"0.0.0.0":          "unspecified",
		"::":               "unspecified",
		"239.1.2.3":        "a multicast address",
		"203.0.114.7":      "an address of this host",
		"100.64.0.1":       "a reserved address (100.64.0.0/10)",
		"0.1.2.3":          "a reserved address (0.0.0.0/8)",
		"255.255.255.255":  "a reserved address (240.0.0.0/4)",
		"64:ff9b::a00:1":   "a reserved address (64:ff9b::/96)",
		"2002:a00:1::1":    "a reserved address (2002::/16)",
		"151.101.0.223":    "",
		"2a04:4e42::223":   "",
	} {
		if got := notPublic(netip.MustParseAddr(addr), own); got != want {
			t.Errorf("notPublic(%s) = %q, want %q", addr, got, want)
		}
	}
}

// proxyTry sends one request line to the proxy at addr and returns the
// status line and the rest of what came back.
func proxyTry(t *testing.T, addr, request string) (string, string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, request); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	status, _ := br.ReadString('\n')
	rest, _ := io.ReadAll(br)
	return strings.TrimSpace(status), string(rest)
}

// TestOutboundProxy: the proxy refuses non-public addresses and
// destinations prepare.allow does not list, and relays the ones it
// allows, by CONNECT and by absolute http:// request.
func TestOutboundProxy(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello %s", r.URL.Path)
	}))
	defer srv.Close()
	dst := strings.TrimPrefix(srv.URL, "http://")
	serve := func(o *Outbound) string {
		l, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		p := serveOutbound(o, l)
		t.Cleanup(func() { p.Close() })
		return l.Addr().String()
	}

	open := serve(&Outbound{})
	for _, target := range []string{dst, "localhost:" + strings.Split(dst, ":")[1], "10.0.0.1:80", "169.254.169.254:80"} {
		status, body := proxyTry(t, open, "CONNECT "+target+" HTTP/1.1\r\nHost: "+target+"\r\n\r\n")
		if !strings.HasPrefix(status, "HTTP/1.1 403") || !strings.Contains(body, "refused") {
			t.Errorf("CONNECT %s without allow: %q %q", target, status, body)
		}
	}
	if status, _ := proxyTry(t, open, "GET http://"+dst+"/x HTTP/1.1\r\nHost: "+dst+"\r\n\r\n"); !strings.HasPrefix(status, "HTTP/1.1 403") {
		t.Errorf("GET through the proxy to loopback: %q", status)
	}
	if status, _ := proxyTry(t, open, "GET /x HTTP/1.1\r\nHost: x\r\n\r\n"); !strings.HasPrefix(status, "HTTP/1.1 400") {
		t.Errorf("an origin-form request: %q", status)
	}

	allowed := serve(&Outbound{Allow: []string{dst}})
	status, body := proxyTry(t, allowed, "CONNECT "+dst+" HTTP/1.1\r\nHost: "+dst+"\r\n\r\nGET /c HTTP/1.0\r\nHost: "+dst+"\r\n\r\n")
	if status != "HTTP/1.1 200 Connection established" || !strings.HasSuffix(body, "hello /c") {
		t.Errorf("CONNECT to an allowed destination: %q %q", status, body)
	}
	status, body = proxyTry(t, allowed, "GET http://"+dst+"/g HTTP/1.1\r\nHost: "+dst+"\r\nProxy-Authorization: x\r\n\r\n")
	if !strings.HasPrefix(status, "HTTP/1.1 200") || !strings.HasSuffix(body, "hello /g") {
		t.Errorf("GET to an allowed destination: %q %q", status, body)
	}
	status, body = proxyTry(t, allowed, "CONNECT pypi.org:443 HTTP/1.1\r\nHost: pypi.org:443\r\n\r\n")
	if !strings.HasPrefix(status, "HTTP/1.1 403") || !strings.Contains(body, "not in prepare.allow") {
		t.Errorf("CONNECT to a destination allow does not list: %q %q", status, body)
	}
}

func TestOutboundEnv(t *testing.T) {
	env := outboundEnv([]string{"PATH=/usr/bin", "https_proxy=http://evil:1", "NO_PROXY=*", "X=1"})
	got := strings.Join(env, " ")
	want := "PATH=/usr/bin X=1 HTTP_PROXY=http://127.0.0.1:3128 HTTPS_PROXY=http://127.0.0.1:3128 http_proxy=http://127.0.0.1:3128 https_proxy=http://127.0.0.1:3128 NO_PROXY= no_proxy="
	if got != want {
		t.Errorf("outboundEnv:\n%s\nwant\n%s", got, want)
	}
}
