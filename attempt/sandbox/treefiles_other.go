//go:build !linux

package sandbox

import "errors"

// WriteTreeFiles is Linux's only (openat2).
func WriteTreeFiles(root string, files []TreeFile) (func(), error) {
	if len(files) == 0 {
		return func() {}, nil
	}
	return nil, errors.New("adding files to an attempt's tree needs Linux")
}
