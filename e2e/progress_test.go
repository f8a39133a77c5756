package e2e_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/check"
	"github.com/flakegate/flakegate/filestore"
)

// openEmbeddedStore opens the repository's embedded store, as the CLI
// does without --ledger: the tests that run a check in process use it.
func openEmbeddedStore(_ context.Context, commonDir string) (flakegate.Store, error) {
	s, err := filestore.Open(filepath.Join(commonDir, filestore.DefaultDir))
	if err != nil {
		return nil, err
	}
	return s, nil
}

// recordingHandler is a check.ProgressHandler that keeps every call.
type recordingHandler struct {
	mu      sync.Mutex
	calls   []string
	results []flakegate.Result
}

func (h *recordingHandler) add(s string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.calls = append(h.calls, s)
}

func (h *recordingHandler) Start(total int) { h.add(fmt.Sprint("start ", total)) }

func (h *recordingHandler) Done(r flakegate.Result) {
	h.mu.Lock()
	h.results = append(h.results, r)
	h.mu.Unlock()
	h.add(fmt.Sprintf("done %s seed %s", r.Label, r.Seed))
}

func (h *recordingHandler) Note(topic, msg string) { h.add(topic + ": " + msg) }

func (h *recordingHandler) Finish() { h.add("finish") }

// TestProgressHandler runs a real check in process with a handler that
// records its calls: Start with the number of triples, one Done per
// triple with the summary's result, Finish, then the notes written after
// the triples (here: no freeze for an unsandboxed SCHEDULER). A nil
// handler discards the progress.
func TestProgressHandler(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end: runs git and the property scripts")
	}
	files := baseFiles(libOK)
	files["flakegate.yaml"] = strings.Replace(config(""), "sandbox:\n", "sandbox:\n  mode: none\n", 1)
	r := newRepo(t, files)
	r.candidate("flaky", map[string]string{"src/lib.sh": libFlaky})
	opts := check.Options{
		Dir:         r.dir,
		Base:        "base",
		Candidate:   "flaky",
		FreezeOwner: "alice",
		Env:         append(cleanEnv(), "FG_STATE="+r.state),
		OpenStore:   openEmbeddedStore,
	}
	h := &recordingHandler{}
	opts.Progress = h
	sum, err := check.Run(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Results) != 2 {
		t.Fatalf("%d results, want 2", len(sum.Results))
	}
	// The triples' calls in order (workers: 1), whatever notes come
	// before or among them; the freeze notes come after Finish.
	var triples, freezeNotes []string
	finish := -1
	for i, c := range h.calls {
		switch {
		case strings.Contains(c, "no freeze granted"):
			if finish < 0 {
				t.Errorf("note %q before Finish", c)
			}
			freezeNotes = append(freezeNotes, c)
		case strings.HasPrefix(c, "note: ") || strings.HasPrefix(c, "queue: "):
		default:
			if c == "finish" {
				finish = i
			}
			triples = append(triples, c)
		}
	}
	want := []string{"start 2", "done SCHEDULER seed 11", "done SCHEDULER seed 12", "finish"}
	if !slices.Equal(triples, want) || len(freezeNotes) != 2 {
		t.Fatalf("calls:\n%s\nwant %q and two notes of freezes not granted", strings.Join(h.calls, "\n"), want)
	}
	for i, seed := range []string{"11", "12"} {
		if note := freezeNotes[i]; !strings.HasPrefix(note, "note: props/prop.sh seed "+seed+": no freeze granted") || !strings.Contains(note, "isolation none") {
			t.Errorf("note %d = %q, want the freeze not granted for seed %s", i, note, seed)
		}
	}
	for i, res := range h.results {
		// Done sees the result before the freeze step adds its reason.
		s := sum.Results[i]
		if res.RecordSHA256 != s.RecordSHA256 || res.Label != s.Label || res.Seed != s.Seed || !strings.HasPrefix(s.Reason, res.Reason) {
			t.Errorf("Done %d got %+v, the summary has %+v", i, res, s)
		}
	}

	opts.Progress = nil
	if sum, err := check.Run(t.Context(), opts); err != nil || len(sum.Results) != 2 {
		t.Fatalf("with no handler: %v, %+v", err, sum)
	}
}
