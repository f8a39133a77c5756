// Known answers drawn once per check, tree and package.
//
// A go batch's known answers are new source in its package, so an
// attempt that carries answers of its own builds the package's test
// binary again. Drawn once per check, tree and package, every go attempt
// of that tree plants the same file, and its build can be shared
// (gocache/build.go: the build step). The nonces stay secret from anything prepared
// before the check (committed code, a fixture): they are drawn from the
// system's randomness at the first use in this check. A process of the
// check can read them in its own attempt, as it always could; no attempt
// can leave anything for another (their tree and cache layers are
// thrown away).

package batch

import (
	"sync"

	"github.com/flakegate/flakegate/internal/lazyre"
)

// KnownDraws holds the go known answers a check drew, by tree and
// package. The zero value is ready; nil draws per attempt.
type KnownDraws struct {
	mu sync.Mutex
	by map[string]*goDraw
}

// goDraw is one package's drawn known answers.
type goDraw struct {
	file, like string    // the test file's name in the package, the file it looks like ("" none)
	src        string    // its content
	names      [2]string // the passing fuzz target, the failing one
	nonces     [2]string
}

// draw returns the draw of key, making it with make at the first use.
func (k *KnownDraws) draw(key string, make func() (*goDraw, error)) (*goDraw, error) {
	if k == nil {
		return make()
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if g := k.by[key]; g != nil {
		return g, nil
	}
	g, err := make()
	if err != nil {
		return nil, err
	}
	if k.by == nil {
		k.by = map[string]*goDraw{}
	}
	k.by[key] = g
	return g, nil
}

var goTestFuncRe = lazyre.New(`(?m)^func\s+(?:Test|Benchmark|Example|Fuzz)(\w*)\s*\(`)

// packageWords is the pool of a package's drawn names: the common words
// and the words of the package's own test functions (sources: its .go
// files), so that the draw depends on the tree alone, never on which
// tests a batch holds.
func packageWords(sources []string) []string {
	pool := append([]string(nil), knownWords...)
	for _, src := range sources {
		for _, m := range goTestFuncRe.FindAllStringSubmatch(src, -1) {
			pool = addNameWords(pool, m[1])
		}
	}
	return pool
}
