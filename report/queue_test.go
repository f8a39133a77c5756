package report

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/filestore"
	"github.com/flakegate/flakegate/internal/pgtest"
	"github.com/flakegate/flakegate/postgres"
)

// TestHTMLQueueProgress: on PostgreSQL the report shows the checks run by
// many runners with their done, claimed and queued triples in all and per
// runner; the embedded store has no such section.
func TestHTMLQueueProgress(t *testing.T) {
	ctx := context.Background()
	st, err := postgres.Open(ctx, pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ts := make([]flakegate.QueuedTriple, 6)
	for i := range ts {
		seed := flakegate.Seed(fmt.Sprint(1400 + i))
		ts[i] = flakegate.QueuedTriple{ID: flakegate.TripleID("props/p.py", "", seed), Position: i, PropertyPath: "props/p.py", Seed: seed}
	}
	c := flakegate.QueuedCheck{ID: "pipeline-77", BaseSHA: strings.Repeat("b", 40), CandidateSHA: strings.Repeat("c", 40),
		ConfigSHA256: testFixture, TriplesSHA256: flakegate.QueuedTriplesSHA256(ts), MaxLeaseExpiries: 2, CreatedBy: "ci-1"}
	if _, err := st.Enqueue(ctx, c, ts); err != nil {
		t.Fatal(err)
	}
	// ci-1 labels two triples and holds a third; ci-2 holds one.
	for _, step := range []struct {
		runner   string
		complete bool
	}{{"ci-1", true}, {"ci-1", true}, {"ci-1", false}, {"ci-2", false}} {
		r := flakegate.Runner{ID: step.runner, Host: step.runner + ".example"}
		l, ok, err := st.Claim(ctx, c.ID, r, time.Minute)
		if err != nil || !ok {
			t.Fatalf("Claim: %v %v", ok, err)
		}
		if step.complete {
			res := flakegate.Result{PropertyPath: "props/p.py", Seed: ts[l.Position].Seed, Label: flakegate.Pass, RunnerID: r.ID}
			if err := st.Complete(ctx, c.ID, l, res, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	d, err := LoadHTMLData(ctx, st, reportNow)
	if err != nil {
		t.Fatal(err)
	}
	if !d.Queued || len(d.Checks) != 1 {
		t.Fatalf("queued %v, checks %+v", d.Queued, d.Checks)
	}
	p := d.Checks[0]
	if p.Done != 2 || p.Claimed != 2 || p.Queued != 2 || len(p.Runners) != 2 || p.Runners[0].Done != 2 || p.Runners[0].Claimed != 1 || p.Runners[1].Claimed != 1 {
		t.Fatalf("progress %+v", p)
	}
	var b bytes.Buffer
	if err := HTML(&b, d); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{`id="queue-table"`, "pipeline-77", "2 / 6", "<code>ci-1</code> <small>on ci-1.example</small>: 2 done, 1 claimed", "<code>ci-2</code> <small>on ci-2.example</small>: 0 done, 1 claimed", `href="#queue"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the page does not show %q", want)
		}
	}

	fs, err := filestore.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	d, err = LoadHTMLData(ctx, fs, reportNow)
	if err != nil {
		t.Fatal(err)
	}
	b.Reset()
	if err := HTML(&b, d); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "queue") {
		t.Error("the embedded store's page has a queue section")
	}
}
