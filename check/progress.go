// The check's progress: the handler interface a renderer implements (the
// CLI passes report.Progress) and the adapters the check feeds it with.

package check

import (
	"io"
	"strings"

	"github.com/flakegate/flakegate"
)

// ProgressHandler receives the progress of a running check, the way
// gotestsum's EventHandler receives test events: the check calls it and
// knows nothing of how it is shown. Its methods are called from several
// goroutines.
type ProgressHandler interface {
	// Start is called once, when the number of triples is known: the ones
	// this run labels, or with Join every triple of the check.
	Start(total int)
	// Done is called once for each triple this run labelled or skipped.
	Done(r flakegate.Result)
	// Note is a line that is no triple's result, at any time (before
	// Start and after Finish too): topic NoteTopic for a lock wait, a lost
	// lease or a freeze not granted, QueueTopic for the shared queue's
	// progress.
	Note(topic, msg string)
	// Finish is called once after the last Done.
	Finish()
}

// BatchProgressHandler is a ProgressHandler that shows a batch's triples
// (batch.go) as one line: the check calls BatchDone once per batch,
// with its members' results in the batch's order, instead of Done for
// each. A handler without it gets Done per triple.
type BatchProgressHandler interface {
	ProgressHandler
	// BatchDone is called once per batch, when the last of its triples
	// is labelled; head says what ran ("go test, seed 7").
	BatchDone(head string, results []flakegate.Result)
}

// TestProgressHandler is a ProgressHandler that is told, while a batch's
// process runs, of each test as the framework's streamed output says it
// ended (go test's -json events, pytest's verbose lines;
// evidence.TestStream), so that a batch of hundreds of tests does not sit
// silent for a minute. It is progress only: the code under test can
// print such lines, and each test's result is judged from the framework's
// report once the process ended, never from the stream.
type TestProgressHandler interface {
	ProgressHandler
	// BatchTest is called from the batch's goroutine as each test of the
	// running batch b ends, with the name and the outcome ("pass",
	// "fail", "skip", "error", "xfail", "xpass") the stream gives.
	BatchTest(b *flakegate.RunningBatch, test, outcome string)
	// BatchEnded is called once b's process ended (after its last
	// BatchTest).
	BatchEnded(b *flakegate.RunningBatch)
}

// The topics of ProgressHandler.Note.
const (
	NoteTopic  = "note"
	QueueTopic = "queue"
)

// discardProgress is the handler of a check given none.
type discardProgress struct{}

func (discardProgress) Start(int)              {}
func (discardProgress) Done(flakegate.Result)  {}
func (discardProgress) Note(topic, msg string) {}
func (discardProgress) Finish()                {}

// NoteWriter returns a writer that turns each line written to it into a
// note of h: the lock waits of internal/flock, the check's own and the
// file store's (filestore.Store.LockWait), reach h like the other notes.
func NoteWriter(h ProgressHandler) io.Writer { return noteWriter{h} }

type noteWriter struct{ h ProgressHandler }

func (w noteWriter) Write(p []byte) (int, error) {
	for line := range strings.Lines(string(p)) {
		if line = strings.TrimRight(line, "\r\n"); line != "" {
			w.h.Note(NoteTopic, line)
		}
	}
	return len(p), nil
}
