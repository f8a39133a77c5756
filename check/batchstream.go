package check

import (
	"fmt"
	"io"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/batch"
	"github.com/flakegate/flakegate/evidence"
	"github.com/flakegate/flakegate/transcript"
)

// batchStream is the writer that streams a batch's output to the
// progress handler as it arrives (TestProgressHandler), and the call to
// make once the process ended; nil and a no-op when the handler does not
// take tests, or the framework's output names no test as it ends. The
// batch's known answers are not shown: they are no tests of the project.
func (b *batchRun) batchStream(side string, attempt, tests int, known *batch.KnownSet) (io.Writer, func()) {
	h, ok := b.c.progress.(TestProgressHandler)
	if !ok {
		return nil, func() {}
	}
	what := side + " attempt " + fmt.Sprint(attempt)
	switch {
	case side == transcript.SideBase:
		what = "base replay"
	case side == transcript.SideProbe:
		what = fmt.Sprintf("flake probe %d", attempt)
	case attempt > 0:
		what = fmt.Sprintf("retry %d", attempt)
	}
	run := &flakegate.RunningBatch{Head: fmt.Sprintf("%s, seed %s, %s", b.shape.Framework, b.members[0].r.j.seed, what), Tests: tests, Started: time.Now()}
	s := evidence.NewTestStream(b.shape.Framework, func(test, outcome string) {
		if !known.Planted(test) {
			h.BatchTest(run, test, outcome)
		}
	})
	if s == nil {
		return nil, func() {}
	}
	return s, func() { h.BatchEnded(run) }
}
