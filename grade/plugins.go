package grade

import (
	"context"
	"path"
	"strings"

	"github.com/flakegate/flakegate/internal/lazyre"
	"github.com/flakegate/flakegate/internal/pysrc"
)

// A pytest plugin the base's config names (pytest_plugins in a
// conftest.py, -p in addopts) that lives in the tree decides how the
// tests run. In a test folder it is the base's with the folder; outside
// one it may be the product itself (a pytest plugin's own repository
// tests it through its name), so it stays the candidate's and is
// watched: a change to it is CONTAMINATED for the pytest tests.

var (
	pyStringRe  = lazyre.New(`["']([A-Za-z_][\w.]*)["']`)
	iniPluginRe = lazyre.New(`(?:^|\s)-p\s*=?\s*([A-Za-z_][\w.]*)`)
)

// pyPlugins watches the plugins the base's conftest.py and ini files of
// the pytest scopes name that live in the tree outside the test folders.
func (b *builder) pyPlugins(ctx context.Context) error {
	var cfgs []string
	for f, e := range b.plan.base {
		if e.Kind == Conftest || e.Kind == PytestIni {
			cfgs = append(cfgs, f)
		}
	}
	for _, s := range b.pyScopes {
		for _, d := range ancestors(b.scopeDir(s)) {
			for _, n := range []string{"pyproject.toml", "setup.cfg", "tox.ini"} {
				if f := path.Join(d, n); b.in.Base.Files[f] {
					cfgs = append(cfgs, f)
				}
			}
		}
	}
	if len(cfgs) == 0 {
		return nil
	}
	texts, err := b.in.Base.Read(ctx, cfgs)
	if err != nil {
		return err
	}
	for _, f := range cfgs {
		var names []string
		if path.Base(f) == "conftest.py" {
			names = conftestPlugins(string(texts[f]))
		} else {
			part := string(texts[f])
			if MixedPytestFile(f) {
				part, _ = PytestPart(f, texts[f])
			}
			for _, m := range iniPluginRe.FindAllStringSubmatch(part, -1) {
				names = append(names, m[1])
			}
		}
		for _, n := range names {
			if mod := b.pyModule(n); mod != "" && !b.Pick(mod) {
				b.plan.Watched[mod] = "a pytest plugin the base's " + f + " names (" + n + ")"
			}
		}
	}
	return nil
}

// Pick is Plan.Pick during the build.
func (b *builder) Pick(f string) bool { return b.plan.Pick(f) }

// conftestPlugins are the module names of a conftest.py's pytest_plugins
// (a string, or a list or tuple of strings).
func conftestPlugins(src string) []string {
	phys := strings.SplitAfter(src, "\n")
	var out []string
	ls := pysrc.LogicalLines(src)
	for i, l := range ls {
		if l.Indent != 0 || len(l.Tokens) < 2 || !l.Tokens[0].Is(pysrc.Name, "pytest_plugins") {
			continue
		}
		end := len(phys)
		if i+1 < len(ls) {
			end = ls[i+1].Number - 1
		}
		text := strings.Join(phys[l.Number-1:min(end, len(phys))], "")
		for _, m := range pyStringRe.FindAllStringSubmatch(text, -1) {
			out = append(out, m[1])
		}
	}
	return out
}

// pyModule is the file of the base that module name may load (from the
// root or src/), "" when none.
func (b *builder) pyModule(name string) string {
	rel := strings.ReplaceAll(name, ".", "/")
	for _, root := range []string{".", "src"} {
		for _, f := range []string{path.Join(root, rel+".py"), path.Join(root, rel, "__init__.py")} {
			if b.in.Base.Files[f] {
				return f
			}
		}
	}
	return ""
}
