// The prepared layers a repository keeps, under <git common dir>/
// flakegate/prepared: bounded in bytes by the config (prepare.keep,
// config.PrepareKeep), collected least recently used first, never one a
// running check holds. A check holds a shared lock on every layer it
// uses (flock on the layer's folder) until it ends; the collector takes
// an exclusive one, without waiting, before it removes a layer, and
// passes over a layer it cannot lock. A layer's last use is its
// meta.json's modification time, which every check that uses it
// touches.

package site

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"golang.org/x/sys/unix"

	"github.com/flakegate/flakegate/internal/bytesize"
	"github.com/flakegate/flakegate/internal/diskfull"
	"github.com/flakegate/flakegate/internal/flock"
)

// unfinishedAge is how old a layer without meta.json (a prepare killed
// with its check) must be before the collector removes it: a check that
// builds a layer locks it a moment after creating it.
const unfinishedAge = time.Minute

// PreparedRoot is the folder of the prepared layers of the repository
// whose git common dir is common.
func PreparedRoot(common string) string { return filepath.Join(common, "flakegate", "prepared") }

// TouchLayer marks the layer at dir used now.
func TouchLayer(dir string) {
	now := time.Now()
	_ = os.Chtimes(filepath.Join(dir, "meta.json"), now, now) // a layer that cannot be touched is collected sooner, no worse
}

// CollectLayers removes the least recently used layers in root until
// those kept fit in keep bytes (the config's bound), passing over the
// ones a check holds. It says what it removed.
func CollectLayers(root string, keep int64, say func(string)) error {
	entries, err := os.ReadDir(root)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	} else if err != nil {
		return diskfull.Error(err, root, "cannot list the prepared layers")
	}
	type layer struct {
		dir  string
		used time.Time
		size int64
		done bool
	}
	var layers []layer
	var total int64
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		l := layer{dir: filepath.Join(root, e.Name())}
		if fi, err := os.Stat(filepath.Join(l.dir, "meta.json")); err == nil {
			l.used, l.done = fi.ModTime(), true
		} else if fi, err := os.Stat(l.dir); err == nil {
			l.used = fi.ModTime()
		}
		l.size = diskUsage(l.dir)
		total += l.size
		layers = append(layers, l)
	}
	sort.Slice(layers, func(i, j int) bool { return layers[i].used.Before(layers[j].used) })
	var removed int
	var freed int64
	for _, l := range layers {
		unfinished := !l.done && time.Since(l.used) > unfinishedAge
		if total <= keep && !unfinished {
			continue
		}
		if !l.done && !unfinished {
			continue // being built
		}
		f, ok, err := flock.TryExclusive(l.dir)
		if err != nil || !ok {
			continue // held by a running check (or gone)
		}
		err = os.RemoveAll(l.dir)
		f.Close()
		if err != nil {
			return diskfull.Error(err, l.dir, "cannot remove a prepared layer")
		}
		total -= l.size
		freed += l.size
		removed++
	}
	if removed > 0 {
		say(fmt.Sprintf("prepared layers: removed %d least recently used (%s), %s kept of at most %s (prepare.keep)",
			removed, bytesize.Format(freed), bytesize.Format(total), bytesize.Format(keep)))
	}
	return nil
}

// diskUsage is the space the files below dir take, in bytes.
func diskUsage(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error { //nolint:errcheck // a file that went away takes no space
		if err != nil {
			return nil
		}
		var st unix.Stat_t
		if unix.Lstat(p, &st) == nil {
			n += st.Blocks * 512
		}
		return nil
	})
	return n
}
