package check

import (
	"fmt"
	"slices"
	"testing"

	"github.com/flakegate/flakegate"
)

type notes []string

func (n *notes) Start(int)              {}
func (n *notes) Done(flakegate.Result)  {}
func (n *notes) Finish()                {}
func (n *notes) Note(topic, msg string) { *n = append(*n, topic+": "+msg) }

// TestNoteWriter: each line written becomes one note; empty lines none.
func TestNoteWriter(t *testing.T) {
	var got notes
	w := NoteWriter(&got)
	fmt.Fprintf(w, "waiting for another check (pid %d) holding the lock\n", 42)
	fmt.Fprint(w, "two\r\n\nlines")
	want := notes{"note: waiting for another check (pid 42) holding the lock", "note: two", "note: lines"}
	if !slices.Equal(got, want) {
		t.Errorf("notes %q, want %q", got, want)
	}
}
