package digest_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/digest"
)

// specEntry is one tree entry as FORMAT.md describes it: data is a file's
// contents or a symlink's target.
type specEntry struct {
	typ  byte // 'f', 'x' or 'l'
	path string
	data []byte
}

// specDigest computes a tree digest straight from the format description,
// with no code shared with the package.
func specDigest(entries []specEntry) string {
	sorted := slices.Clone(entries)
	slices.SortFunc(sorted, func(a, b specEntry) int { return bytes.Compare([]byte(a.path), []byte(b.path)) })
	var stream bytes.Buffer
	stream.WriteString("flakegate-tree-v1\n")
	for _, e := range sorted {
		sum := sha256.Sum256(e.data)
		stream.WriteByte(e.typ)
		stream.WriteString(" " + hex.EncodeToString(sum[:]) + " " + e.path)
		stream.WriteByte(0)
	}
	sum := sha256.Sum256(stream.Bytes())
	return hex.EncodeToString(sum[:])
}

// fataler is what build needs from *testing.T and *rapid.T.
type fataler interface {
	Helper()
	Fatal(args ...any)
}

// build creates entries under dir.
func build(t fataler, dir string, entries []specEntry) {
	t.Helper()
	for _, e := range entries {
		p := filepath.Join(dir, filepath.FromSlash(e.path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		var err error
		switch e.typ {
		case 'f':
			err = writeMode(p, e.data, 0o644)
		case 'x':
			err = writeMode(p, e.data, 0o755)
		case 'l':
			err = os.Symlink(string(e.data), p)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// writeMode writes a file with exactly mode, whatever the umask.
func writeMode(p string, data []byte, mode os.FileMode) error {
	if err := os.WriteFile(p, data, mode); err != nil {
		return err
	}
	return os.Chmod(p, mode)
}

// goldenEntries is the golden tree: files, an executable, symlinks (one
// to a folder, never followed), nested and empty folders, non-ASCII names
// and paths whose byte order differs from the walk order ("a.b", "a.txt"
// sort before "a/c").
var goldenEntries = []specEntry{
	{'f', "a.txt", []byte("alpha\n")},
	{'f', "a.b", []byte("dot\n")},
	{'f', "a/c", []byte("in a\n")},
	{'x', "bin/run.sh", []byte("#!/bin/sh\necho hi\n")},
	{'l', "link", []byte("a.txt")},
	{'l', "bin/up", []byte("../nested/deep")},
	{'f', "nested/deep/z.bin", byteRange()},
	{'f', "café/ñ.txt", []byte("unicode\n")},
	{'f', "empty.txt", nil},
	{'f', "Z.txt", []byte("upper\n")},
}

// goldenTree was computed once outside Go, from FORMAT.md, by a Python
// script and by a find/sort/sha256sum pipeline over the same tree; both
// gave this value. TestGoldenMatchesSpec keeps it honest.
const goldenTree = "77afd3cf528558b341d4543c95b51eb2ba40697ec2912e68532174ce809bac00"

func byteRange() []byte {
	b := make([]byte, 256)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}

func buildGolden(t testing.TB) string {
	dir := t.TempDir()
	build(t, dir, goldenEntries)
	if err := os.MkdirAll(filepath.Join(dir, "empty", "deeper"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestTreeGolden(t *testing.T) {
	got, err := digest.Tree(context.Background(), buildGolden(t))
	if err != nil {
		t.Fatal(err)
	}
	if got != goldenTree {
		t.Fatalf("Tree(golden) = %s, want %s", got, goldenTree)
	}
}

// TestGoldenMatchesSpec recomputes the golden vector from the format
// description, so the constant and the description cannot drift apart.
func TestGoldenMatchesSpec(t *testing.T) {
	if got := specDigest(goldenEntries); got != goldenTree {
		t.Fatalf("spec digest of the golden entries = %s, want %s", got, goldenTree)
	}
	empty := sha256.Sum256([]byte(digest.TreeHeader))
	if got := specDigest(nil); got != hex.EncodeToString(empty[:]) {
		t.Fatalf("spec digest of no entries = %s, want sha256 of the header", got)
	}
}

func TestFile(t *testing.T) {
	dir := t.TempDir()
	big := bytes.Repeat([]byte("0123456789abcdef"), (3<<20)/16+7) // several buffers, not a multiple
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	bigPath := write("big", big)
	bigSum := sha256.Sum256(big)
	if err := os.Symlink(bigPath, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}

	type testCase struct {
		name     string
		path     string
		want     string
		wantCode string
	}
	run := func(t *testing.T, tc testCase) {
		got, err := digest.File(tc.path)
		if tc.wantCode != "" {
			if flakegate.ErrorCode(err) != tc.wantCode || !strings.Contains(err.Error(), tc.path) {
				t.Fatalf("File(%q) error %v, want code %q naming the path", tc.path, err, tc.wantCode)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Fatalf("File(%q) = %s, want %s", tc.path, got, tc.want)
		}
	}
	for _, tc := range []testCase{
		// Standard vectors (FIPS 180-2).
		{name: "empty", path: write("empty", nil), want: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
		{name: "abc", path: write("abc", []byte("abc")), want: "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
		{name: "bigger than the buffer", path: bigPath, want: hex.EncodeToString(bigSum[:])},
		{name: "symlink is followed", path: filepath.Join(dir, "link"), want: hex.EncodeToString(bigSum[:])},
		{name: "missing", path: filepath.Join(dir, "nope"), wantCode: flakegate.ENOTFOUND},
		{name: "folder", path: dir, wantCode: flakegate.EINVALID},
		{name: "fifo does not hang", path: fifo, wantCode: flakegate.EINVALID},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestFileMatchesSha256sum checks File against the coreutils binary.
func TestFileMatchesSha256sum(t *testing.T) {
	bin, err := exec.LookPath("sha256sum")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("sha256sum not found")
		}
		t.Skip("sha256sum not installed")
	}
	p := filepath.Join(t.TempDir(), "data")
	data := bytes.Repeat([]byte{0, 1, 2, 0xff, '\n'}, 100_003)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, p).Output()
	if err != nil {
		t.Fatal(err)
	}
	got, err := digest.File(p)
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Fields(string(out))[0]; got != want {
		t.Fatalf("File = %s, sha256sum = %s", got, want)
	}
}

func TestTree(t *testing.T) {
	type testCase struct {
		name    string
		entries []specEntry
		// change, if set, edits the built tree; the digest must then
		// equal specDigest(want) (or stay the same when want is nil).
		change func(t *testing.T, dir string)
		want   []specEntry
	}
	run := func(t *testing.T, tc testCase) {
		dir := t.TempDir()
		build(t, dir, tc.entries)
		want := tc.entries
		if tc.change != nil {
			tc.change(t, dir)
			if tc.want != nil {
				want = tc.want
			}
		}
		got, err := digest.Tree(context.Background(), dir)
		if err != nil {
			t.Fatal(err)
		}
		if w := specDigest(want); got != w {
			t.Fatalf("Tree = %s, want %s", got, w)
		}
	}
	chmod := func(rel string, mode os.FileMode) func(*testing.T, string) {
		return func(t *testing.T, dir string) {
			if err := os.Chmod(filepath.Join(dir, rel), mode); err != nil {
				t.Fatal(err)
			}
		}
	}
	one := []specEntry{{'f', "a", []byte("x")}}
	many := make([]specEntry, 300)
	for i := range many {
		many[i] = specEntry{'f', strings.Repeat("d/", i%5) + hex.EncodeToString([]byte{byte(i), byte(i >> 8)}), bytes.Repeat([]byte{byte(i)}, i*97)}
	}
	for _, tc := range []testCase{
		{name: "empty folder"},
		{name: "only empty folders", change: func(t *testing.T, dir string) {
			if err := os.MkdirAll(filepath.Join(dir, "a", "b", "c"), 0o755); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "one file", entries: one},
		{name: "many files in parallel", entries: many},
		{name: "owner execute bit makes x", entries: one, change: chmod("a", 0o700), want: []specEntry{{'x', "a", []byte("x")}}},
		{name: "group execute bit alone does not", entries: one, change: chmod("a", 0o654)},
		{name: "read-only does not count", entries: one, change: chmod("a", 0o400)},
		{name: "symlink to outside is not followed", entries: []specEntry{{'l', "out", []byte("/etc/hostname")}}},
		{name: "dangling symlink", entries: []specEntry{{'l', "d", []byte("no/such/file")}}},
		{name: "symlink loop", entries: []specEntry{{'l', "s1", []byte("s2")}, {'l', "s2", []byte("s1")}}},
		{name: "name with newline and backslash", entries: []specEntry{{'f', "a\nb\\c", []byte("x")}}},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

func TestTreeErrors(t *testing.T) {
	dir := t.TempDir()
	build(t, dir, []specEntry{{'f', "sub/file", []byte("x")}, {'l', "dangling", []byte("nope")}})
	withFifo := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(withFifo, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	canceled, cancel := context.WithCancel(context.Background())
	cancel()

	type testCase struct {
		name     string
		ctx      context.Context
		call     func(ctx context.Context, p string) (string, error)
		path     string
		wantCode string
		wantErr  error
	}
	run := func(t *testing.T, tc testCase) {
		if tc.ctx == nil {
			tc.ctx = context.Background()
		}
		_, err := tc.call(tc.ctx, tc.path)
		if tc.wantErr != nil {
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("error %v, want %v", err, tc.wantErr)
			}
			return
		}
		if flakegate.ErrorCode(err) != tc.wantCode || !strings.Contains(err.Error(), tc.path) {
			t.Fatalf("error %v, want code %q naming %s", err, tc.wantCode, tc.path)
		}
	}
	for _, tc := range []testCase{
		{name: "Tree of a missing folder", call: digest.Tree, path: filepath.Join(dir, "missing"), wantCode: flakegate.ENOTFOUND},
		{name: "Tree of a file", call: digest.Tree, path: filepath.Join(dir, "sub", "file"), wantCode: flakegate.EINVALID},
		{name: "Tree with a fifo inside", call: digest.Tree, path: withFifo, wantCode: flakegate.EINVALID},
		{name: "Tree canceled", ctx: canceled, call: digest.Tree, path: dir, wantErr: context.Canceled},
		{name: "Path of a missing path", call: digest.Path, path: filepath.Join(dir, "missing"), wantCode: flakegate.ENOTFOUND},
		{name: "Path of a dangling symlink", call: digest.Path, path: filepath.Join(dir, "dangling"), wantCode: flakegate.ENOTFOUND},
		{name: "Path of a fifo", call: digest.Path, path: filepath.Join(withFifo, "fifo"), wantCode: flakegate.EINVALID},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestPathDispatch checks that Path agrees with File and Tree, and
// follows a symlink named as the path itself.
func TestPathDispatch(t *testing.T) {
	dir := buildGolden(t)
	links := t.TempDir()
	if err := os.Symlink(dir, filepath.Join(links, "tree")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "a.txt"), filepath.Join(links, "file")); err != nil {
		t.Fatal(err)
	}
	alpha := sha256.Sum256([]byte("alpha\n"))

	type testCase struct {
		name string
		path string
		want string
	}
	run := func(t *testing.T, tc testCase) {
		got, err := digest.Path(context.Background(), tc.path)
		if err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Fatalf("Path(%q) = %s, want %s", tc.path, got, tc.want)
		}
	}
	for _, tc := range []testCase{
		{name: "folder", path: dir, want: goldenTree},
		{name: "file", path: filepath.Join(dir, "a.txt"), want: hex.EncodeToString(alpha[:])},
		{name: "symlink to a folder", path: filepath.Join(links, "tree"), want: goldenTree},
		{name: "symlink to a file", path: filepath.Join(links, "file"), want: hex.EncodeToString(alpha[:])},
		{name: "folder with trailing slash", path: dir + "/", want: goldenTree},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}
