// The base's listing of a suite, kept between checks (suites/cache.go
// says what names it): the check's glue, over its site.

package check

import (
	"context"

	"github.com/flakegate/flakegate/config"
	sitepkg "github.com/flakegate/flakegate/site"
	"github.com/flakegate/flakegate/suites"
)

// suiteListKey names a base listing of go suite s: "" when it is not
// kept (suites.GoListKey).
func (c *site) suiteListKey(s *config.Suite) string {
	if c.iso == nil {
		return ""
	}
	return suites.GoListKey(s, c.baseSHA, c.iso.Env)
}

// baseSuiteList is listSuite on the base tree t, read from the kept
// listing when there is one.
func (c *site) baseSuiteList(ctx context.Context, s *config.Suite, t *sitepkg.Tree) (*suites.List, error) {
	if s.Framework == config.FrameworkPytest {
		return c.basePytestList(ctx, s, t)
	}
	key := c.suiteListKey(s)
	if key == "" {
		return c.listSuite(ctx, s, t, true)
	}
	file := suites.ListPath(c.common, key)
	if list, ok := suites.ReadList(file); ok {
		suites.Touch(file) // last used
		return list, nil
	}
	list, err := c.listSuite(ctx, s, t, true)
	if err != nil {
		return nil, err
	}
	suites.WriteList(file, list)
	return list, nil
}

// basePytestList is listSuite of pytest suite s on the base tree t, read
// from the kept listing when one has the key suites.PytestListKey makes.
func (c *site) basePytestList(ctx context.Context, s *config.Suite, t *sitepkg.Tree) (*suites.List, error) {
	l := c.lister(s, t, true)
	python, hypothesis, err := l.PytestProbe(ctx)
	if err != nil {
		return nil, err
	}
	key, err := c.pytestListKey(ctx, l, s, python, hypothesis)
	if err != nil {
		return nil, err
	}
	if key == "" {
		return l.CollectPytest(ctx, s, python, hypothesis)
	}
	file := suites.ListPath(c.common, key)
	if list, ok := suites.ReadList(file); ok && list.Python == python && list.Hypothesis == hypothesis {
		suites.Touch(file) // last used
		list.Key = key
		return list, nil
	}
	list, err := l.CollectPytest(ctx, s, python, hypothesis)
	if err != nil {
		return nil, err
	}
	suites.WriteList(file, list)
	list.Key = key
	return list, nil
}

// pytestListKey names the base's listing of pytest suite s run by python
// (l lists on the base tree): "" when it cannot be named (the tree's hash
// or the probe failed), and then it is not kept.
func (c *site) pytestListKey(ctx context.Context, l *suites.Lister, s *config.Suite, python string, hypothesis bool) (string, error) {
	if c.iso == nil {
		return "", nil
	}
	tree, err := c.git.Tree(ctx, c.baseSHA)
	if err != nil {
		return "", nil
	}
	return suites.PytestListKey(ctx, l, s, tree, python, hypothesis, c.iso.Env)
}
