package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// copyMark separates a fresh copy's tree name from the pid of the
// flakegate that made it.
const copyMark = ".copy-"

// copyPath is where an attempt of s gets its fresh copy of s.Tree: in
// s.CopyDir (the check's, on the worktrees' file system, so that a
// reflink can share the tree's blocks), else in os.TempDir(). The path
// is the same for every attempt of one flakegate on one tree (no standby
// is made in copy mode: the copy is made for the attempt that runs on
// it), so a retry cannot tell itself from the first attempt by it
// (it shows in /proc/self/mountinfo); the pid keeps two flakegates apart
// and lets SweepCopies find what a killed one left.
func (s *Sandbox) copyPath() string {
	name := filepath.Base(s.Tree)
	dir := s.CopyDir
	if dir == "" {
		sum := sha256.Sum256([]byte(s.Tree))
		name, dir = "flakegate-"+hex.EncodeToString(sum[:6]), os.TempDir()
	}
	return filepath.Join(dir, name+copyMark+strconv.Itoa(os.Getpid()))
}

// freshCopy makes dst a fresh copy of src: what an earlier attempt left
// there is removed first (RemoveTree: whatever modes it left), then `cp
// -a --reflink=auto` copies the tree with its modes, times and owners;
// on a file system with reflinks (Btrfs, XFS) the files share their
// blocks until written, elsewhere they are copied in full.
func freshCopy(src, dst string) error {
	if err := RemoveTree(dst); err != nil {
		return fmt.Errorf("cannot remove the previous attempt's copy %s: %w", dst, err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return err
	}
	cp, err := exec.LookPath("cp")
	if err != nil {
		cp = "/bin/cp"
	}
	out, err := exec.Command(cp, "-a", "--reflink=auto", "--no-target-directory", src, dst).CombinedOutput()
	if err != nil {
		_ = RemoveTree(dst)
		return fmt.Errorf("cannot copy the tree for the attempt: %v: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

// SweepCopies removes the fresh copies in dir (and os.TempDir()) that a
// flakegate killed in the middle of an attempt left: those whose
// flakegate is no longer running. It returns how many it removed.
func SweepCopies(dir string) int {
	var found []string
	for _, d := range []string{dir, os.TempDir()} {
		if d == "" {
			continue
		}
		m, _ := filepath.Glob(filepath.Join(d, "*"+copyMark+"*"))
		found = append(found, m...)
	}
	n := 0
	for _, p := range found {
		i := strings.LastIndex(p, copyMark)
		pid, err := strconv.Atoi(p[i+len(copyMark):])
		if err != nil || pid <= 0 || pid == os.Getpid() || processAlive(pid) {
			continue
		}
		if RemoveTree(p) == nil {
			n++
		}
	}
	return n
}
