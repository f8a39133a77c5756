package sandbox

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"

	"golang.org/x/sys/unix"
)

// The page cache without a memory cgroup. An attempt's cgroup is
// reclaimed after it (cgroup_linux.go), so what it was the first to read
// leaves the cache before a retry can look. Without a cgroup (rlimits,
// as without root on most machines) nothing reclaims it, and a retry
// could tell by a read's time or its major faults that a file of the
// tree was read before it. So before every sandboxed attempt on such a
// machine (a candidate's first attempt, a retry, the base's, a probe's,
// a prepare's: the same for all, so that none finds what another left)
// flakegate drops the folders the attempts' overlays read from the page
// cache: the tree (on overlays; a fresh copy is new inodes with nothing
// cached), the prepared layer, the repository's Go build and module
// caches and the sandbox.ro folders. The system folders and toolchains
// are not swept (over a hundred thousand files on a common runner, each
// attempt): docs/sandbox.md says what that leaves. Each file is opened from flakegate's side, read-only without
// following a link, and given posix_fadvise(POSIX_FADV_DONTNEED); the
// filter refuses that advice inside the attempt (seccomp_linux.go).

// evictRoots are the folders to drop from the page cache around an
// attempt of this sandbox, nil when its memory cgroup is reclaimed
// instead. Around: before every attempt, and after one whose cache is
// not kept (the same rule as the cgroup's reclaim), so that the host's
// cache is left as the check found it. The sweep after an attempt waits
// for the next one's, which drops the same folders (one sweep per
// attempt, not two), or for the sandbox's Close, which sweeps what the
// last attempts left; an attempt that ends after Close is swept at once.
// A folder whose pages cannot leave memory (Resident: a tmpfs without
// swap, where flakegate puts the worktrees when it sweeps, see
// site/treeroot.go) is not swept: every attempt finds it as resident as
// the last one did, and the advice would not drop its pages anyway.
func (s *Sandbox) evictRoots() []string {
	if s.Reclaimed() {
		return nil
	}
	roots := []string{}
	if !s.Level.Copy {
		roots = append(roots, s.Tree)
	}
	roots = append(roots, s.Prepared, s.GoCache, s.GoModCache)
	roots = append(roots, s.RO...)
	return slices.DeleteFunc(roots, func(p string) bool { return p == "" || Resident(p) })
}

// sweepPageCache drops evictRoots from the page cache before an attempt
// (Run calls it before the attempt's clock starts: the sweep is not the
// test's time).
func (s *Sandbox) sweepPageCache() {
	roots := s.evictRoots()
	evictTrees(roots)
	s.pool.swept(roots)
}

// evictTrees drops every regular file under roots from the page cache,
// the folders walked by as many goroutines as there are processors.
// Best effort: what cannot be opened is skipped.
func evictTrees(roots []string) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for _, r := range roots {
		fd, err := unix.Open(filepath.Clean(r), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			continue
		}
		evictDir(fd, &wg, sem)
	}
	wg.Wait()
}

// evictDir evicts the files of the folder open at fd and walks its
// subfolders (in another goroutine while one is free), then closes fd.
// No link is followed: each name is opened relative to its folder with
// O_NOFOLLOW.
func evictDir(fd int, wg *sync.WaitGroup, sem chan struct{}) {
	dir := os.NewFile(uintptr(fd), "")
	defer dir.Close()
	ents, _ := dir.ReadDir(-1)
	var subs []string
	for _, e := range ents {
		switch e.Type() {
		case 0: // a regular file
			f, err := unix.Openat(fd, e.Name(), unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
			if err == nil {
				evictFile(f)
				unix.Close(f)
			}
		case os.ModeDir:
			subs = append(subs, e.Name())
		}
	}
	for _, name := range subs {
		sub, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			continue
		}
		select {
		case sem <- struct{}{}:
			wg.Add(1)
			go func() {
				defer wg.Done()
				evictDir(sub, wg, sem)
				<-sem
			}()
		default:
			evictDir(sub, wg, sem)
		}
	}
}

// evictFile drops the pages of the file open at fd from the page cache.
// cachestat (Linux 6.5+) says first whether it has any: most files of a
// swept tree have none, and cost no more. Dirty pages (a file the
// checkout just wrote) are not dropped by the advice: they are written
// first (sync_file_range: no journal commit, no flush).
func evictFile(fd int) {
	var st unix.Cachestat_t
	if unix.Cachestat(uint(fd), &unix.CachestatRange{}, &st, 0) == nil {
		if st.Cache == 0 {
			return
		}
		if st.Dirty == 0 && st.Writeback == 0 {
			_ = unix.Fadvise(fd, 0, 0, unix.FADV_DONTNEED)
			return
		}
	}
	_ = unix.SyncFileRange(fd, 0, 0, unix.SYNC_FILE_RANGE_WAIT_BEFORE|unix.SYNC_FILE_RANGE_WRITE|unix.SYNC_FILE_RANGE_WAIT_AFTER)
	_ = unix.Fadvise(fd, 0, 0, unix.FADV_DONTNEED)
}
