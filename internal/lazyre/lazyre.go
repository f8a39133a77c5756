// Package lazyre is a regular expression compiled on its first use, not
// when its package is loaded.
//
// flakegate's binary is also its own sandbox helper, re-executed for every
// attempt, and every package-level regexp.MustCompile runs again in each
// of those processes before main: about a millisecond of an attempt's
// start, for expressions the helper never uses. A package-level
// lazyre.New costs nothing until a method is called.
package lazyre

import (
	"regexp"
	"sync"
)

// Regexp is a regexp.Regexp compiled once, on its first use. An invalid
// expression panics then, as regexp.MustCompile would at load; the
// tests that use each one catch that.
type Regexp struct {
	expr string
	once sync.Once
	re   *regexp.Regexp
}

// New is expr, to be compiled on first use.
func New(expr string) *Regexp { return &Regexp{expr: expr} }

// Compiled is the compiled expression.
func (r *Regexp) Compiled() *regexp.Regexp {
	r.once.Do(func() { r.re = regexp.MustCompile(r.expr) })
	return r.re
}

func (r *Regexp) String() string            { return r.expr }
func (r *Regexp) MatchString(s string) bool { return r.Compiled().MatchString(s) }
func (r *Regexp) Match(b []byte) bool       { return r.Compiled().Match(b) }
func (r *Regexp) FindIndex(b []byte) []int  { return r.Compiled().FindIndex(b) }
func (r *Regexp) FindStringSubmatch(s string) []string {
	return r.Compiled().FindStringSubmatch(s)
}
func (r *Regexp) FindAllStringSubmatch(s string, n int) [][]string {
	return r.Compiled().FindAllStringSubmatch(s, n)
}
func (r *Regexp) FindAllSubmatch(b []byte, n int) [][][]byte {
	return r.Compiled().FindAllSubmatch(b, n)
}
func (r *Regexp) ReplaceAllString(src, repl string) string {
	return r.Compiled().ReplaceAllString(src, repl)
}
func (r *Regexp) ReplaceAllStringFunc(src string, repl func(string) string) string {
	return r.Compiled().ReplaceAllStringFunc(src, repl)
}
