package flakegate

// Label is the outcome of the decision table for one record.
type Label string

// The labels of the decision table.
const (
	Incomplete   Label = "INCOMPLETE"
	Contaminated Label = "CONTAMINATED"
	Fixture      Label = "FIXTURE"
	Budget       Label = "BUDGET"
	Property     Label = "PROPERTY"
	Scheduler    Label = "SCHEDULER"
	Pass         Label = "PASS"
)

// Labels lists every label in the order of the spec's listing.
var Labels = []Label{Incomplete, Contaminated, Fixture, Budget, Property, Scheduler, Pass}

// Known reports whether l is one of the seven labels.
func (l Label) Known() bool {
	for _, k := range Labels {
		if l == k {
			return true
		}
	}
	return false
}

// Reject reports whether the merge check fails on l. PASS passes and
// SCHEDULER earns a freeze; every other label is a reject.
func (l Label) Reject() bool { return l != Pass && l != Scheduler }
