package git_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/flakegate/flakegate/git"
)

func TestShowFiles(t *testing.T) {
	r := newRepo(t)
	c := &git.Client{Dir: r.dir}
	got, err := c.ShowFiles(context.Background(), "HEAD", []string{"a.txt", "dir/b.txt", "gone.txt", "dir", "sp ace.txt", "../x", "a\nb"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]byte{"a.txt": []byte("a2\n"), "dir/b.txt": []byte("b\n"), "sp ace.txt": []byte("x\n")}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("HEAD: %q, want %q", got, want)
	}
	got, err = c.ShowFiles(context.Background(), "v1", []string{"a.txt", "gone.txt"})
	if err != nil || string(got["a.txt"]) != "a1\n" || string(got["gone.txt"]) != "gone\n" {
		t.Errorf("v1: %q, %v", got, err)
	}
	if _, err := c.ShowFiles(context.Background(), "nope", []string{"a.txt"}); err == nil {
		t.Error("a bad revision: no error")
	}
}
