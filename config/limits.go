package config

import (
	"github.com/goccy/go-yaml/ast"

	"github.com/flakegate/flakegate/internal/bytesize"
)

// Limits bound what one sandboxed attempt may use (sandbox.limits):
//
//	limits:
//	  memory: 4GiB   the attempt's processes together (a cgroup)
//	  pids: 2048     processes and threads at once (a cgroup)
//	  tmp: 1GiB      each of /tmp, /dev/shm and $HOME (tmpfs)
//	  disk: 4GiB     what the attempt may write to its tree (overlay mode)
//
// A key the config leaves out takes its default; Set records which keys
// the config named, since a limit the config asks for and the host cannot
// enforce stops the check, while a default that cannot be enforced is
// only reported.
type Limits struct {
	Memory int64 // bytes
	Pids   int
	Tmp    int64 // bytes, per tmpfs
	Disk   int64 // bytes
	Set    map[string]bool
}

// Default limits: generous for a property test, small enough that one
// hostile attempt cannot take a 2-core, 8 GiB runner down.
const (
	DefaultMemory = 4 << 30
	DefaultPids   = 2048
	DefaultTmp    = 1 << 30
	DefaultDisk   = 4 << 30
)

// DefaultLimits are the limits of a config without sandbox.limits.
func DefaultLimits() Limits {
	return Limits{Memory: DefaultMemory, Pids: DefaultPids, Tmp: DefaultTmp, Disk: DefaultDisk, Set: map[string]bool{}}
}

// minSize is the smallest size limit: below it a shell cannot start.
const minSize = 1 << 20

func (l *loader) limits(n ast.Node) (Limits, error) {
	lim := DefaultLimits()
	m, err := l.mapping("sandbox.limits", n)
	if err != nil {
		return lim, err
	}
	f, err := l.fields("sandbox.limits", m, "memory", "pids", "tmp", "disk")
	if err != nil {
		return lim, err
	}
	for _, key := range []string{"memory", "tmp", "disk"} {
		v, ok := f[key]
		if !ok {
			continue
		}
		size, err := l.size("sandbox.limits."+key, v)
		if err != nil {
			return lim, err
		}
		switch key {
		case "memory":
			lim.Memory = size
		case "tmp":
			lim.Tmp = size
		case "disk":
			lim.Disk = size
		}
		lim.Set[key] = true
	}
	if v, ok := f["pids"]; ok {
		if lim.Pids, err = l.integer("sandbox.limits.pids", v, 8, 1<<22); err != nil {
			return lim, err
		}
		lim.Set["pids"] = true
	}
	return lim, nil
}

// size reads a size limit: bytes as an integer, or a string with a
// binary or decimal unit ("4GiB"), at least 1MiB.
func (l *loader) size(k string, n ast.Node) (int64, error) {
	v, err := l.node(k, n)
	if err != nil {
		return 0, err
	}
	var text string
	if in, isInt := v.(*ast.IntegerNode); isInt {
		text = in.String() // bytes
	} else if text, err = l.str(k, v); err != nil {
		return 0, err
	}
	size, err := bytesize.Parse(text)
	if err != nil {
		return 0, l.errf(k, v, "%v", err)
	}
	if size < minSize {
		return 0, l.errf(k, v, "%s is below the smallest limit, 1MiB", text)
	}
	return size, nil
}
