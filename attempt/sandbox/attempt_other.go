//go:build !linux

package sandbox

import (
	"errors"
	"os"
	"os/exec"

	"github.com/flakegate/flakegate/attempt"
	"time"
)

type sandboxRun struct {
	cmd    *exec.Cmd
	pr     *os.File
	status chan bwrapStatus
	cg     *struct{}
	ready  time.Time
}

func (s *Sandbox) start(string, *attempt.Command) (*sandboxRun, error) {
	return nil, errors.New("the sandbox is Linux only")
}

func (s *Sandbox) sweepPageCache() {}

func (r *sandboxRun) started()       {}
func (r *sandboxRun) hit() string    { return "" }
func (r *sandboxRun) finish() string { return "" }
func (r *sandboxRun) keepErr() error { return nil }
func (r *sandboxRun) cleanup()       {}
func helperMain([]string) int        { return helperExit }
func holderMain() int                { return helperExit }
func dropIdentity() (int, int, bool) { return -1, -1, false }
func findCgroups() cgroupHost        { return cgroupHost{why: "cgroups are Linux only"} }

type cgroupHost struct {
	v2       bool
	mem, why string
}

func sizeText(n int64) string { return "" }
func sweepCgroups() int       { return 0 }

type pool struct{}

func newPool() *pool     { return &pool{} }
func (p *pool) close()   {}
func (p *pool) spawned() {}

func (p *pool) leaveUnswept([]string) bool { return false }

func (p *pool) swept([]string) {}

// Resident is Linux only: elsewhere nothing is known to stay in memory.
func Resident(string) bool { return false }

// SwapOn is Linux only.
func SwapOn() bool { return true }
