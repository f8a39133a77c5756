package sandbox

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Outbound is the network of a prepare with network: true. The prepare
// has a network namespace of its own, like every attempt (a loopback
// and nothing else: no route out, no loopback service and no abstract
// unix socket of the host). flakegate puts one listening socket into
// that namespace, at OutboundProxy, and serves an HTTP proxy on it from
// the host's namespace: CONNECT host:port (HTTPS) and absolute-form
// http:// requests. The proxy resolves the name itself and connects only
// to a public address: never a loopback, private, link-local, multicast,
// reserved or documentation address, nor one of the host's own
// addresses (where a PostgreSQL may listen on 0.0.0.0). pip, npm, go and
// curl reach it through HTTPS_PROXY and HTTP_PROXY, which the prepare's
// environment carries.
//
// Allow, when it lists destinations (host:port), is the only set the
// proxy connects to; a listed one is allowed whatever address it has (a
// registry mirror of the organisation's own). The config is the base's,
// which the candidate cannot change.
type Outbound struct {
	Allow []string
}

// OutboundProxy is where a prepare's proxy listens, in its own network
// namespace: the same in every prepare, so its environment is too.
const OutboundProxy = "127.0.0.1:3128"

// outboundEnv is what a prepare's environment says about its proxy.
func outboundEnv(env []string) []string {
	out := make([]string, 0, len(env)+6)
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		switch strings.ToLower(name) {
		case "http_proxy", "https_proxy", "all_proxy", "no_proxy":
			continue
		}
		out = append(out, kv)
	}
	u := "http://" + OutboundProxy
	return append(out, "HTTP_PROXY="+u, "HTTPS_PROXY="+u, "http_proxy="+u, "https_proxy="+u, "NO_PROXY=", "no_proxy=")
}

// proxy serves one prepare's outbound connections until closed.
type proxy struct {
	o     *Outbound
	l     net.Listener
	mu    sync.Mutex
	conns map[net.Conn]bool
	done  bool
}

func serveOutbound(o *Outbound, l net.Listener) *proxy {
	p := &proxy{o: o, l: l, conns: map[net.Conn]bool{}}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			if !p.track(c) {
				c.Close()
				return
			}
			go p.handle(c)
		}
	}()
	return p
}

// track adds c to the connections that Close ends; false once closed.
func (p *proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done {
		return false
	}
	p.conns[c] = true
	return true
}

func (p *proxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	c.Close()
}

// Close ends the listener and every connection (the prepare ended).
func (p *proxy) Close() error {
	p.mu.Lock()
	p.done = true
	conns := p.conns
	p.conns = map[net.Conn]bool{}
	p.mu.Unlock()
	err := p.l.Close()
	for c := range conns {
		c.Close()
	}
	return err
}

// headerTimeout bounds how long the proxy waits for a request's header.
const headerTimeout = 30 * time.Second

func (p *proxy) handle(c net.Conn) {
	defer p.untrack(c)
	_ = c.SetReadDeadline(time.Now().Add(headerTimeout))
	br := bufio.NewReader(c)
	req, err := http.ReadRequest(br)
	if err != nil {
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	target := req.Host
	if req.Method != http.MethodConnect {
		if req.URL == nil || req.URL.Scheme != "http" || req.URL.Host == "" {
			refuse(c, http.StatusBadRequest, "only CONNECT and absolute http:// requests go through this proxy")
			return
		}
		target = req.URL.Host
		if _, _, err := net.SplitHostPort(target); err != nil {
			target = net.JoinHostPort(strings.Trim(target, "[]"), "80")
		}
	}
	up, err := p.dial(target)
	if err != nil {
		refuse(c, http.StatusForbidden, err.Error())
		return
	}
	if !p.track(up) {
		up.Close()
		return
	}
	defer p.untrack(up)
	if req.Method == http.MethodConnect {
		if _, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
			return
		}
	} else {
		for name := range req.Header {
			if strings.HasPrefix(strings.ToLower(name), "proxy-") {
				req.Header.Del(name)
			}
		}
		req.Close = true // one request per connection: the next may name another host
		if err := req.Write(up); err != nil {
			return
		}
	}
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(up, br); closeWrite(up); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, up); closeWrite(c); done <- struct{}{} }()
	<-done
	<-done
}

func closeWrite(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
	}
}

func refuse(c net.Conn, code int, why string) {
	body := "flakegate: " + why + "\n"
	fmt.Fprintf(c, "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", code, http.StatusText(code), len(body), body)
}

// dialTimeout bounds a connection to a destination.
const dialTimeout = 30 * time.Second

// dial connects to target (host:port) if the policy allows it: a listed
// destination as named, else a public address the proxy resolved itself
// (it dials that address, so a second resolution cannot rebind it).
func (p *proxy) dial(target string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(target)
	if err != nil {
		return nil, fmt.Errorf("refused %q: not host:port", target)
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 {
		return nil, fmt.Errorf("refused %q: bad port", target)
	}
	d := net.Dialer{Timeout: dialTimeout}
	if len(p.o.Allow) > 0 {
		want := net.JoinHostPort(strings.ToLower(host), port)
		for _, a := range p.o.Allow {
			if a == want {
				return d.Dial("tcp", want)
			}
		}
		return nil, fmt.Errorf("refused %s: not in prepare.allow", want)
	}
	ctx, cancel := context.WithTimeout(context.Background(), dialTimeout)
	defer cancel()
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else if addrs, err = net.DefaultResolver.LookupNetIP(ctx, "ip", host); err != nil {
		return nil, fmt.Errorf("refused %s: cannot resolve it: %v", target, err)
	}
	own := hostAddrs()
	var last error = fmt.Errorf("refused %s: no address", target)
	for _, a := range addrs {
		if why := notPublic(a, own); why != "" {
			last = fmt.Errorf("refused %s: %s is %s", target, a, why)
			continue
		}
		c, err := d.DialContext(ctx, "tcp", netip.AddrPortFrom(a.Unmap(), uint16(n)).String())
		if err == nil {
			return c, nil
		}
		last = err
	}
	return nil, last
}

// hostAddrs are the addresses of the host's own interfaces.
func hostAddrs() map[netip.Addr]bool {
	own := map[netip.Addr]bool{}
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if pfx, err := netip.ParsePrefix(a.String()); err == nil {
			own[pfx.Addr().Unmap()] = true
		}
	}
	return own
}

// reserved are the prefixes no prepare connects to besides loopback,
// private and link-local ones: this network, shared address space
// (carrier NAT), IETF protocol assignments, documentation, benchmarking,
// reserved and broadcast; NAT64, 6to4 and Teredo, which lead to IPv4
// addresses; the IPv6 discard and documentation prefixes.
var reserved = func() []netip.Prefix {
	var out []netip.Prefix
	for _, s := range []string{"0.0.0.0/8", "100.64.0.0/10", "192.0.0.0/24", "192.0.2.0/24", "198.18.0.0/15",
		"198.51.100.0/24", "203.0.113.0/24", "240.0.0.0/4", "64:ff9b::/96", "64:ff9b:1::/48", "100::/64",
		"2001::/32", "2001:db8::/32", "2002::/16"} {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}()

// notPublic says why a is no address a prepare may connect to, "" when
// it may.
func notPublic(a netip.Addr, own map[netip.Addr]bool) string {
	a = a.Unmap()
	switch {
	case !a.IsValid() || a.IsUnspecified():
		return "unspecified"
	case a.IsLoopback():
		return "a loopback address"
	case a.IsPrivate():
		return "a private address"
	case a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast():
		return "a link-local address"
	case a.IsMulticast() || a.IsInterfaceLocalMulticast():
		return "a multicast address"
	case own[a]:
		return "an address of this host"
	}
	for _, p := range reserved {
		if p.Contains(a) {
			return "a reserved address (" + p.String() + ")"
		}
	}
	return ""
}

// errNoOutbound is a prepare whose network the host cannot give.
var errNoOutbound = errors.New("a prepare with network: true needs flakegate as root (it puts its proxy into the prepare's network namespace)")
