package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// leftovers lists the temporary files left in dir.
func leftovers(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, ".*.tmp"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestWriteFile(t *testing.T) {
	type testCase struct {
		name string
		old  *string // nil: the file does not exist yet
		perm os.FileMode
	}
	old := "old content\n"
	run := func(t *testing.T, tc testCase) {
		dir := t.TempDir()
		path := filepath.Join(dir, "out.json")
		if tc.old != nil {
			if err := os.WriteFile(path, []byte(*tc.old), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if err := WriteFile(path, []byte("new content\n"), tc.perm); err != nil {
			t.Fatal(err)
		}
		if got := readFile(t, path); got != "new content\n" {
			t.Errorf("content %q", got)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != tc.perm {
			t.Errorf("mode %v, want %v", fi.Mode().Perm(), tc.perm)
		}
		if left := leftovers(t, dir); len(left) > 0 {
			t.Errorf("temporary files left: %v", left)
		}
	}
	for _, tc := range []testCase{
		{"new file", nil, 0o644},
		{"replaces a file", &old, 0o644},
		{"private mode", &old, 0o600},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestFailedWriteKeepsOldContent: whatever fails, the final name keeps the
// bytes it had and no temporary file stays behind.
func TestFailedWriteKeepsOldContent(t *testing.T) {
	type testCase struct {
		name  string
		write func(path string) error
		want  string // in the error
	}
	run := func(t *testing.T, tc testCase) {
		dir := t.TempDir()
		path := filepath.Join(dir, "ledger.json")
		if err := os.WriteFile(path, []byte("old\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		err := tc.write(path)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Fatalf("err %v, want one containing %q", err, tc.want)
		}
		if got := readFile(t, path); got != "old\n" {
			t.Errorf("content %q after a failed write, want the old one", got)
		}
		if left := leftovers(t, dir); len(left) > 0 {
			t.Errorf("temporary files left: %v", left)
		}
	}
	for _, tc := range []testCase{
		{"writer fails halfway", func(path string) error {
			return Write(path, 0o644, func(w io.Writer) error {
				io.WriteString(w, "half of the new")
				return errors.New("encoder broke")
			})
		}, "encoder broke"},
		{"commit never called", func(path string) error {
			f, err := New(path, 0o644)
			if err != nil {
				return err
			}
			f.WriteString("abandoned")
			f.Cleanup()
			return errors.New("abandoned")
		}, "abandoned"},
		{"rename fails", func(path string) error {
			// A folder at the final name: the data is written and synced,
			// the rename is refused.
			if err := os.Remove(path); err != nil {
				return err
			}
			if err := os.Mkdir(path, 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(path, "keep"), nil, 0o644); err != nil {
				return err
			}
			err := WriteFile(path, []byte("new\n"), 0o644)
			os.RemoveAll(path)
			os.WriteFile(path, []byte("old\n"), 0o644)
			return err
		}, "ledger.json"},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

func TestNewInMissingFolder(t *testing.T) {
	err := WriteFile(filepath.Join(t.TempDir(), "no", "such", "f"), []byte("x"), 0o644)
	if !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("err %v, want not exist", err)
	}
}

// TestSteps: at "written" the final name still holds the old bytes (a
// crash there loses nothing), at "renamed" it holds the new ones.
func TestSteps(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := New(path, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Cleanup()
	var seen []string
	f.Step = func(step string) { seen = append(seen, step+"="+readFile(t, path)) }
	if _, err := f.WriteString("new"); err != nil {
		t.Fatal(err)
	}
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(seen, " "), "written=old renamed=new"; got != want {
		t.Errorf("steps %q, want %q", got, want)
	}
	f.Cleanup() // after Commit: must not remove the file
	if got := readFile(t, path); got != "new" {
		t.Errorf("content %q after Cleanup", got)
	}
}

// TestConcurrentWriters: many writers racing on one name leave one whole
// content, never a mix, and no temporary file.
func TestConcurrentWriters(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "summary.json")
	const n = 16
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- WriteFile(path, []byte(strings.Repeat(fmt.Sprint(i%10), 64<<10)), 0o644)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	got := readFile(t, path)
	if len(got) != 64<<10 || strings.Trim(got, got[:1]) != "" {
		t.Fatalf("mixed content: %d bytes, first %q", len(got), got[:1])
	}
	if left := leftovers(t, dir); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// TestOnlyWriter: outside this package, no code writes a file whole with
// os.WriteFile or renames one into place; such writes go through here.
// Appends (logs, transcripts, the audit log) and a writability probe are
// not replacements and are not listed.
func TestOnlyWriter(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	allowed := map[string]string{
		"check/check.go":                  "os.CreateTemp", // the --out writability probe, removed at once
		"attempt/sandbox/cgroup_linux.go": "os.WriteFile",  // cgroup control files: kernel interfaces, not files replaced
		"attempt/sandbox/helper_linux.go": "os.WriteFile",  // cgroup.procs, and empty mount points for files
		"attempt/sandbox/level.go":        "os.WriteFile",  // the probe's file in its throwaway tree
		"attempt/sandbox/etc.go":          "os.Rename",     // a whole staged /etc folder put in place, not a file
		"gocache/gocache.go":              "os.Rename",     // a whole verified module folder put in place, not a file
		"gocache/std.go":                  "os.Rename",     // a Go build cache entry, which go writes unsynced too: a lost one is compiled again
		"gocache/mirror.go":               "os.Rename",     // a file of the Go caches' mirror on a tmpfs: no disk to sync, the disk cache is the durable copy
	}
	found := 0
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "testdata", "examples", "atomicfile":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		found++
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		for _, call := range []string{"os.WriteFile", "os.Rename", "os.CreateTemp", "ioutil.WriteFile"} {
			if strings.Contains(string(raw), call+"(") && allowed[filepath.ToSlash(rel)] != call {
				t.Errorf("%s calls %s: write the file with atomicfile instead", rel, call)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found < 20 {
		t.Fatalf("walked only %d Go files under %s", found, root)
	}
}

// TestPublish: Publish replaces a file's bytes whole, with its mode, and
// leaves no temporary file beside it.
func TestPublish(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.json")
	for _, data := range []string{"first", "second, longer"} {
		if err := Publish(p, []byte(data), 0o640); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(p)
		if err != nil || string(got) != data {
			t.Fatalf("read %q, %v; want %q", got, err, data)
		}
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o640 {
		t.Fatalf("mode %v", fi.Mode())
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("want only out.json, got %v", ents)
	}
	if err := Publish(filepath.Join(dir, "missing", "x"), []byte("x"), 0o644); err == nil {
		t.Fatal("no error for a missing folder")
	}
}
