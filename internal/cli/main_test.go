package cli

import (
	"testing"

	"github.com/flakegate/flakegate/internal/pgtest"
	"github.com/flakegate/flakegate/runner"
)

// TestMain makes this test binary its own overlay helper, as main does,
// so the in-process checks of these tests run their attempts the way the
// flakegate binary does; the PostgreSQL cluster of doctor's tests
// (pgtest) is removed when they end.
func TestMain(m *testing.M) {
	runner.MaybeOverlayExec()
	pgtest.Main(m)
}
