package batch

import (
	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/evidence"
)

// Framework is the framework a property's triples are batched
// under, "" when they run in processes of their own: batch: false, a
// pass or fail marker (the markers judge a whole process's output, which
// a batch shares), or a framework without a per-test report flakegate
// reads. It is the one place that decides, from the framework the
// property's argv was recognised as.
// framework is the property's evidence framework (EvidenceFramework).
func Framework(p *config.Property, framework string) string {
	if !p.Batch || p.PassMarker != nil || p.FailMarker != nil {
		return ""
	}
	switch framework {
	case evidence.FrameworkGo, evidence.FrameworkPytest, evidence.FrameworkJest, evidence.FrameworkVitest:
		return framework
	}
	return ""
}
