package e2e_test

import (
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
)

// The non-root modes' user cache folders ($XDG_CACHE_HOME), one per uid
// for the whole test binary, as a real user's ~/.cache is: the standard
// library layer (gocache/std.go) a first Go check of that user
// builds serves its later checks, so not every test repository compiles
// the standard library again. Each test's $HOME stays its own.
var (
	userCacheMu   sync.Mutex
	userCacheRoot string
)

// userCache is uid's cache folder, made on first use.
func userCache(t *testing.T, uid int) string {
	t.Helper()
	userCacheMu.Lock()
	defer userCacheMu.Unlock()
	if userCacheRoot == "" {
		dir, err := os.MkdirTemp("", "flakegate-e2e-usercache-")
		if err != nil {
			t.Fatal(err)
		}
		userCacheRoot = dir
		reachable(t, dir)
	}
	dir := filepath.Join(userCacheRoot, strconv.Itoa(uid))
	if err := os.Mkdir(dir, 0o700); err == nil {
		if err := os.Chown(dir, uid, uid); err != nil {
			t.Fatal(err)
		}
	} else if !os.IsExist(err) {
		t.Fatal(err)
	}
	return dir
}

// removeUserCaches removes the folders userCache made.
func removeUserCaches() {
	userCacheMu.Lock()
	defer userCacheMu.Unlock()
	if userCacheRoot != "" {
		os.RemoveAll(userCacheRoot)
	}
}
