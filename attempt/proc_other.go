//go:build unix && !linux

package attempt

import "errors"

// waitNoReap is not available here; Run then reaps the leader before it
// kills the rest of its group.
func waitNoReap(pid int) error { return errors.ErrUnsupported }
