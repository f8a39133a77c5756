package cli

import (
	"testing"

	"github.com/flakegate/flakegate/attempt/sandbox"
	"github.com/flakegate/flakegate/internal/pgtest"
)

// TestMain makes this test binary its own overlay helper, as main does,
// so the in-process checks of these tests run their attempts the way the
// flakegate binary does; the PostgreSQL cluster of doctor's tests
// (pgtest) is removed when they end.
func TestMain(m *testing.M) {
	sandbox.MaybeOverlayExec()
	pgtest.Main(m)
}
