package config

import (
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml/ast"

	"github.com/flakegate/flakegate/template"
)

// DefaultPrepareBudget bounds a prepare whose budget the config leaves out.
const DefaultPrepareBudget = 10 * time.Minute

// Prepare is a prepare block, top level or per property:
//
//	prepare:
//	  run: [pip, install, --no-build-isolation, -e, .]   required; argv, no shell, no placeholder
//	  budget: 10m                                        optional; wall time (default 10m)
//	  network: true                                      optional; outbound only, through flakegate's proxy (default false)
//	  allow: [registry.internal:4873]                    optional; the only destinations (host:port) the proxy connects to
//	  limits: {disk: 2GiB}                               optional; what it may write (default sandbox.limits.disk)
//	  keep: 10GiB                                        optional; the kept layers' bound (see Config.PrepareKeep)
//
// It runs once per tree (per commit, command and environment) in the
// attempt's sandbox with the tree writable; what it writes to the tree
// and to the Go build cache becomes a read-only layer under every attempt
// of that tree. A property's own block replaces the top-level one.
type Prepare struct {
	Run     []string
	Budget  time.Duration
	Network bool
	// Allow lists the destinations, host:port, the network proxy
	// connects to; none allows every public address. A listed one is
	// allowed even where it resolves to a private or loopback address (a
	// package mirror of the organisation's own).
	Allow []string
	// Disk bounds what the prepare writes to its tree and Go cache, in
	// bytes; 0 takes the sandbox's limits.disk.
	Disk int64
	// Keep is the bound in bytes of the prepared layers kept in the
	// repository (0: not set here).
	Keep int64
}

// DefaultPrepareKeep bounds the prepared layers a repository keeps when
// the config sets no keep.
const DefaultPrepareKeep = 10 << 30

// PrepareKeep is the bound in bytes of the prepared layers a repository
// keeps: the top-level prepare's keep, else the smallest keep of the
// properties' own prepares, else DefaultPrepareKeep. Layers beyond it are
// removed, least recently used first.
func (cfg *Config) PrepareKeep() int64 {
	if cfg.Prepare != nil && cfg.Prepare.Keep > 0 {
		return cfg.Prepare.Keep
	}
	var keep int64
	for i := range cfg.Properties {
		if p := cfg.Properties[i].Prepare; p != nil && p.Keep > 0 && (keep == 0 || p.Keep < keep) {
			keep = p.Keep
		}
	}
	if keep == 0 {
		return DefaultPrepareKeep
	}
	return keep
}

func (l *loader) prepare(key string, n ast.Node) (*Prepare, error) {
	m, err := l.mapping(key, n)
	if err != nil {
		return nil, err
	}
	f, err := l.fields(key, m, "run", "budget", "network", "allow", "limits", "keep")
	if err != nil {
		return nil, err
	}
	p := &Prepare{Budget: DefaultPrepareBudget}
	v, ok := f["run"]
	if !ok {
		return nil, l.errf(join(key, "run"), m, "missing (required)")
	}
	if p.Run, err = l.run(join(key, "run"), v); err != nil {
		return nil, err
	}
	for _, name := range []string{"path", "name", "seed", "samples", "fixture"} {
		if template.Uses(p.Run, name) {
			return nil, l.errf(join(key, "run"), v, "uses {%s}; a prepare runs once per tree, for no property or seed in particular", name)
		}
	}
	if v, ok := f["budget"]; ok {
		if p.Budget, err = l.duration(join(key, "budget"), v); err != nil {
			return nil, err
		}
	}
	if v, ok := f["network"]; ok {
		v, err := l.node(join(key, "network"), v)
		if err != nil {
			return nil, err
		}
		b, isBool := v.(*ast.BoolNode)
		if !isBool {
			return nil, l.errf(join(key, "network"), v, "want true or false, got %s", kind(v))
		}
		p.Network = b.Value
	}
	if v, ok := f["allow"]; ok {
		if p.Allow, err = l.allow(join(key, "allow"), v); err != nil {
			return nil, err
		}
		if !p.Network {
			return nil, l.errf(join(key, "allow"), v, "lists destinations of a prepare without network: true")
		}
	}
	if v, ok := f["limits"]; ok {
		lk := join(key, "limits")
		lm, err := l.mapping(lk, v)
		if err != nil {
			return nil, err
		}
		lf, err := l.fields(lk, lm, "disk")
		if err != nil {
			return nil, err
		}
		if dv, ok := lf["disk"]; ok {
			if p.Disk, err = l.size(join(lk, "disk"), dv); err != nil {
				return nil, err
			}
		}
	}
	if v, ok := f["keep"]; ok {
		if p.Keep, err = l.size(join(key, "keep"), v); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// allow reads a list of host:port destinations.
func (l *loader) allow(key string, n ast.Node) ([]string, error) {
	seq, err := l.sequence(key, n)
	if err != nil {
		return nil, err
	}
	out := []string{}
	for i, v := range seq.Values {
		k := key + "[" + strconv.Itoa(i) + "]"
		s, err := l.str(k, v)
		if err != nil {
			return nil, err
		}
		host, port, err := net.SplitHostPort(s)
		if err != nil || host == "" || strings.ContainsAny(host, "/*? ") {
			return nil, l.errf(k, v, "want host:port (pypi.org:443, [::1]:4873), got %q", s)
		}
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return nil, l.errf(k, v, "the port of %q is not a number from 1 to 65535", s)
		}
		out = append(out, net.JoinHostPort(strings.ToLower(host), port))
	}
	return out, nil
}
