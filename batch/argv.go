// The command of one triple: its run template expanded for a seed, with
// the options that make the framework print its evidence.

package batch

import (
	"strconv"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/evidence"
	"github.com/flakegate/flakegate/suites"
	"github.com/flakegate/flakegate/template"
)

// TripleArgv is the command of one attempt of p for seed, as check and
// replay run it: the run template expanded, with the options that make
// the framework print its evidence.
func TripleArgv(p *config.Property, seed flakegate.Seed) ([]string, error) {
	argv, err := template.Expand(p.Run, Vars(p, seed))
	if err != nil {
		return nil, err
	}
	argv = evidence.ArgvFor(EvidenceFramework(p), argv)
	if p.Framework == config.FrameworkPytest {
		argv = suites.PyBootstrapArgv(argv, "run") // pytest from the toolchain (suites/pybootstrap.go)
	}
	return argv, nil
}

// EvidenceFramework is the evidence framework of p: its config framework,
// with none as evidence.FrameworkNone.
func EvidenceFramework(p *config.Property) string {
	if p.Framework == config.FrameworkNone {
		return evidence.FrameworkNone
	}
	return p.Framework
}

// Vars are the placeholder values of one seed of p.
func Vars(p *config.Property, seed flakegate.Seed) template.Vars {
	return template.Vars{Path: p.Path, Name: p.Name, Seed: seed.String(), Samples: strconv.Itoa(p.Samples), Fixture: p.Fixture}
}
