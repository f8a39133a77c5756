package check

import "github.com/flakegate/flakegate/evidence"

// batchFramework is the framework a property's triples are batched
// under, "" when they run in processes of their own: batch: false, a
// pass or fail marker (the markers judge a whole process's output, which
// a batch shares), or a framework without a per-test report flakegate
// reads. It is the one place that decides, from the framework the
// property's argv was recognised as.
func batchFramework(ps *propState) string {
	p := ps.prop
	if !p.Batch || p.PassMarker != nil || p.FailMarker != nil {
		return ""
	}
	switch ps.framework {
	case evidence.FrameworkGo, evidence.FrameworkPytest, evidence.FrameworkJest, evidence.FrameworkVitest:
		return ps.framework
	}
	return ""
}
