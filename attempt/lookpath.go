package attempt

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// LookPath finds prog in the absolute folders of the PATH of env
// (flakegate's own when env is nil); it starts nothing. A relative folder
// ("", ".", "bin") is the working folder's, a checkout's, whose programs
// no command runs on the host.
func LookPath(prog string, env []string) (string, error) {
	if env == nil {
		return exec.LookPath(prog)
	}
	pathVar := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			pathVar = v
		}
	}
	for _, dir := range filepath.SplitList(pathVar) {
		if !filepath.IsAbs(dir) {
			continue
		}
		f := filepath.Join(dir, prog)
		if fi, err := os.Stat(f); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return f, nil
		}
	}
	return "", exec.ErrNotFound
}
