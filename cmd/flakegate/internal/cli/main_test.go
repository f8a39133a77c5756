package cli

import (
	"testing"

	"github.com/flakegate/flakegate/attempt/sandbox"
	"github.com/flakegate/flakegate/internal/pgtest"
)

// TestMain makes this test binary its own overlay helper, as main does,
// so the in-process checks of these tests run their attempts the way the
// flakegate binary does; the PostgreSQL cluster of doctor's and the db
// commands' tests (pgtest) is removed when they end. Re-executed by
// TestFreezeConsumeProcesses, it is one 'flakegate freeze consume'
// consumer process.
func TestMain(m *testing.M) {
	sandbox.MaybeOverlayExec()
	pgtest.MainWithConsumers(m, map[string]pgtest.Consumer{"cli": cliConsumer})
}
