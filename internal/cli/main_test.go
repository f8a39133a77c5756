package cli

import (
	"os"
	"testing"

	"github.com/flakegate/flakegate/runner"
)

// TestMain makes this test binary its own overlay helper, as main does,
// so the in-process checks of these tests run their attempts the way the
// flakegate binary does.
func TestMain(m *testing.M) {
	runner.MaybeOverlayExec()
	os.Exit(m.Run())
}
