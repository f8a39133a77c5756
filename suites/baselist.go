// The base's listing of a suite, kept between checks (cache.go says
// what names it): read from the kept file, or listed now and kept.

package suites

import (
	"context"

	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/site"
)

// listKey names a base listing of go suite s: "" when it is not kept
// (GoListKey).
func (e *Env) listKey(s *config.Suite) string {
	if e.Iso == nil {
		return ""
	}
	return GoListKey(s, e.BaseSHA, e.Iso.Env)
}

// BaseList is List on the base tree t, read from the kept listing when
// there is one.
func (e *Env) BaseList(ctx context.Context, s *config.Suite, t *site.Tree) (*List, error) {
	if s.Framework == config.FrameworkPytest {
		return e.basePytestList(ctx, s, t)
	}
	key := e.listKey(s)
	if key == "" {
		return e.List(ctx, s, t, true)
	}
	file := ListPath(e.Common, key)
	if list, ok := ReadList(file); ok {
		Touch(file) // last used
		return list, nil
	}
	list, err := e.List(ctx, s, t, true)
	if err != nil {
		return nil, err
	}
	WriteList(file, list)
	return list, nil
}

// basePytestList is List of pytest suite s on the base tree t, read
// from the kept listing when one has the key PytestListKey makes.
func (e *Env) basePytestList(ctx context.Context, s *config.Suite, t *site.Tree) (*List, error) {
	l := e.lister(s, t, true)
	python, hypothesis, err := l.PytestProbe(ctx)
	if err != nil {
		return nil, err
	}
	key, err := e.pytestListKey(ctx, l, s, python, hypothesis)
	if err != nil {
		return nil, err
	}
	if key == "" {
		return l.CollectPytest(ctx, s, python, hypothesis)
	}
	file := ListPath(e.Common, key)
	if list, ok := ReadList(file); ok && list.Python == python && list.Hypothesis == hypothesis {
		Touch(file) // last used
		list.Key = key
		return list, nil
	}
	list, err := l.CollectPytest(ctx, s, python, hypothesis)
	if err != nil {
		return nil, err
	}
	WriteList(file, list)
	list.Key = key
	return list, nil
}

// pytestListKey names the base's listing of pytest suite s run by
// python (l lists on the base tree): "" when it cannot be named (the
// tree's hash or the probe failed), and then it is not kept.
func (e *Env) pytestListKey(ctx context.Context, l *Lister, s *config.Suite, python string, hypothesis bool) (string, error) {
	if e.Iso == nil {
		return "", nil
	}
	tree, err := e.Git.Tree(ctx, e.BaseSHA)
	if err != nil {
		return "", nil
	}
	return PytestListKey(ctx, l, s, tree, python, hypothesis, e.Iso.Env)
}
