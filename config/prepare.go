package config

import (
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
//	  network: true                                      optional; keep the host's network (default false)
//
// It runs once per tree (per commit, command and environment) in the
// attempt's sandbox with the tree writable; what it writes to the tree
// and to the Go build cache becomes a read-only layer under every attempt
// of that tree. A property's own block replaces the top-level one.
type Prepare struct {
	Run     []string
	Budget  time.Duration
	Network bool
}

func (l *loader) prepare(key string, n ast.Node) (*Prepare, error) {
	m, err := l.mapping(key, n)
	if err != nil {
		return nil, err
	}
	f, err := l.fields(key, m, "run", "budget", "network")
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
	return p, nil
}
