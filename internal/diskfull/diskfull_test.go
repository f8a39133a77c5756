package diskfull

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/flakegate/flakegate"
)

// TestError: a full disk (ENOSPC or a quota) says "no space left on" and
// what to free; any other failure keeps its message; both exit 3.
func TestError(t *testing.T) {
	for _, c := range []struct {
		err  error
		full bool
	}{
		{fmt.Errorf("write: %w", unix.ENOSPC), true},
		{unix.EDQUOT, true},
		{errors.New("permission denied"), false},
	} {
		err := Error(c.err, "/", "cannot write")
		var fe *flakegate.Error
		if !errors.As(err, &fe) || fe.Code != flakegate.EINTERNAL || !errors.Is(err, c.err) {
			t.Fatalf("%v: %#v", c.err, err)
		}
		if got := strings.HasPrefix(fe.Message, "cannot write: no space left on /") && fe.Hint != ""; got != c.full {
			t.Errorf("%v: message %q hint %q", c.err, fe.Message, fe.Hint)
		}
	}
	if mountOf("/proc/self") != "/proc" {
		t.Errorf("mount of /proc/self: %q", mountOf("/proc/self"))
	}
}
