//go:build !linux

package check

// fileSystem is only known on Linux; elsewhere both sides say "unknown".
func fileSystem(dir string) (string, error) { return "unknown", nil }
