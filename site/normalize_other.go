//go:build !linux

package site

// normalizeTree is Linux only (the sandbox is); elsewhere it does nothing.
func normalizeTree(dir string) error { return nil }
