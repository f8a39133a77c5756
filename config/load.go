package config

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/template"
	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"

	"github.com/flakegate/flakegate/internal/lazyre"
)

// Load parses and validates a config. name is the file name used in
// errors (usually the repo-relative path, e.g. "flakegate.yaml"). Every
// error is a *flakegate.Error with code EINVALID naming name and the key.
func Load(raw []byte, name string) (*Config, error) {
	return LoadWith(raw, name, nil)
}

// LoadWith is Load with a reader of the repository's files at the
// config's revision (ok false for a file that is not there), which the
// default framework of a JavaScript test file is read from (its nearest
// package.json). With a nil read such a property whose command is not
// recognized gets framework none.
func LoadWith(raw []byte, name string, read func(path string) ([]byte, bool)) (*Config, error) {
	if name == "" {
		name = DefaultPath
	}
	l := &loader{file: name, read: read}
	root, err := l.parse(raw)
	if err != nil {
		return nil, err
	}
	cfg, err := l.config(root)
	if err != nil {
		return nil, err
	}
	cfg.Name = name
	return cfg, nil
}

type loader struct {
	file string
	read func(string) ([]byte, bool)
}

func (l *loader) errf(key string, n ast.Node, format string, args ...any) *flakegate.Error {
	return errorf(l.file, key, line(n), format, args...)
}

func line(n ast.Node) int {
	if n == nil {
		return 0
	}
	if tk := n.GetToken(); tk != nil && tk.Position != nil {
		return tk.Position.Line
	}
	return 0
}

func (l *loader) parse(raw []byte) (*ast.MappingNode, error) {
	if !utf8.Valid(raw) {
		return nil, errorf(l.file, "", 0, "not valid UTF-8")
	}
	f, err := parser.ParseBytes(raw, 0)
	if err != nil {
		var ye yaml.Error
		if errors.As(err, &ye) {
			ln := 0
			if tk := ye.GetToken(); tk != nil && tk.Position != nil {
				ln = tk.Position.Line
			}
			return nil, errorf(l.file, "", ln, "%s", ye.GetMessage())
		}
		return nil, errorf(l.file, "", 0, "%s", strings.TrimSpace(yaml.FormatError(err, false, false)))
	}
	var docs []ast.Node
	for _, d := range f.Docs {
		if d != nil && d.Body != nil {
			docs = append(docs, d.Body)
		}
	}
	switch len(docs) {
	case 0:
		return nil, errorf(l.file, "", 0, "the file is empty; want a mapping with version and properties")
	case 1:
	default:
		return nil, errorf(l.file, "", line(docs[1]), "holds %d YAML documents; want one", len(docs))
	}
	m, err := l.mapping("", docs[0])
	if err != nil {
		return nil, err
	}
	return m, nil
}

// node unwraps comments and rejects anchors, aliases and tags: a gate's
// config should read the same to a person and to the parser.
func (l *loader) node(key string, n ast.Node) (ast.Node, error) {
	switch v := n.(type) {
	case *ast.AnchorNode, *ast.AliasNode:
		return nil, l.errf(key, n, "YAML anchors and aliases are not supported; write the value out")
	case *ast.TagNode:
		return nil, l.errf(key, n, "YAML tags (%s) are not supported", v.Start.Value)
	case *ast.MappingValueNode:
		return ast.Mapping(v.GetToken(), false, v), nil
	}
	return n, nil
}

func (l *loader) mapping(key string, n ast.Node) (*ast.MappingNode, error) {
	n, err := l.node(key, n)
	if err != nil {
		return nil, err
	}
	m, ok := n.(*ast.MappingNode)
	if !ok {
		what := key
		if what == "" {
			what = "the top level"
		}
		return nil, l.errf("", n, "%s: want a mapping, got %s", what, kind(n))
	}
	return m, nil
}

// fields returns the mapping's values by key, rejecting keys not in allowed.
func (l *loader) fields(prefix string, m *ast.MappingNode, allowed ...string) (map[string]ast.Node, error) {
	out := make(map[string]ast.Node, len(m.Values))
	for _, mv := range m.Values {
		k, ok := mv.Key.(ast.ScalarNode)
		if !ok || mv.Key.Type() == ast.MergeKeyType {
			return nil, l.errf(prefix, mv.Key, "keys must be plain strings")
		}
		name := fmt.Sprint(k.GetValue())
		full := join(prefix, name)
		if !contains(allowed, name) {
			return nil, l.errf(full, mv.Key, "unknown key; want one of %s", strings.Join(allowed, ", "))
		}
		if _, dup := out[name]; dup {
			return nil, l.errf(full, mv.Key, "duplicate key")
		}
		if _, isNull := mv.Value.(*ast.NullNode); isNull {
			return nil, l.errf(full, mv.Value, "has no value")
		}
		out[name] = mv.Value
	}
	return out, nil
}

func join(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (l *loader) config(root *ast.MappingNode) (*Config, error) {
	f, err := l.fields("", root, "version", "retry_cap", "workers", "random_seeds", "watch", "freeze", "sandbox", "prepare", "properties", "flake_probe_runs", "reject_new_flakes", "ledger",
		"suites", "new_test_runs", "reject_flaky_new_tests", "impact")
	if err != nil {
		return nil, err
	}
	cfg := &Config{RetryCap: DefaultRetryCap, Workers: DefaultWorkers, Freeze: FreezePolicy{ExpiresAfterRuns: DefaultExpiresAfterRuns},
		FlakeProbeRuns: DefaultFlakeProbeRuns}
	if err := l.scalars(cfg, root, f); err != nil {
		return nil, err
	}
	if err := l.blocks(cfg, f); err != nil {
		return nil, err
	}
	if err := l.suites(cfg, f); err != nil {
		return nil, err
	}
	if err := l.properties(cfg, root, f); err != nil {
		return nil, err
	}
	return cfg, nil
}

// scalars reads the config's top-level numbers, flags and watch globs.
func (l *loader) scalars(cfg *Config, root *ast.MappingNode, f map[string]ast.Node) error {
	v, ok := f["version"]
	if !ok {
		return l.errf("version", root, "missing; want version: 1")
	}
	var err error
	if cfg.Version, err = l.integer("version", v, 1, 1); err != nil {
		return err
	}
	if v, ok := f["retry_cap"]; ok {
		if cfg.RetryCap, err = l.integer("retry_cap", v, 0, MaxRetryCap); err != nil {
			return err
		}
	}
	if v, ok := f["workers"]; ok {
		if cfg.Workers, err = l.integer("workers", v, 1, MaxWorkers); err != nil {
			return err
		}
	}
	if v, ok := f["random_seeds"]; ok {
		if cfg.RandomSeeds, err = l.integer("random_seeds", v, 0, MaxRandomSeeds); err != nil {
			return err
		}
	}
	if v, ok := f["watch"]; ok {
		if cfg.Watch, err = l.globs("watch", v); err != nil {
			return err
		}
	}
	if v, ok := f["flake_probe_runs"]; ok {
		if cfg.FlakeProbeRuns, err = l.integer("flake_probe_runs", v, 0, MaxFlakeProbeRuns); err != nil {
			return err
		}
	}
	if v, ok := f["reject_new_flakes"]; ok {
		if cfg.RejectNewFlakes, err = l.boolean("reject_new_flakes", v); err != nil {
			return err
		}
	}
	cfg.Impact = true
	if v, ok := f["impact"]; ok {
		if cfg.Impact, err = l.boolean("impact", v); err != nil {
			return err
		}
	}
	return nil
}

// blocks reads the ledger, freeze, sandbox and prepare blocks.
func (l *loader) blocks(cfg *Config, f map[string]ast.Node) error {
	var err error
	cfg.Ledger.KeyEnv = DefaultLedgerKeyEnv
	if v, ok := f["ledger"]; ok {
		m, err := l.mapping("ledger", v)
		if err != nil {
			return err
		}
		lf, err := l.fields("ledger", m, "key_env")
		if err != nil {
			return err
		}
		if v, ok := lf["key_env"]; ok {
			name, err := l.str("ledger.key_env", v)
			if err != nil {
				return err
			}
			if !envNameRe.MatchString(name) {
				return l.errf("ledger.key_env", v, "%q is not a variable name ([A-Za-z_][A-Za-z0-9_]*)", name)
			}
			cfg.Ledger.KeyEnv = name
		}
	}
	if v, ok := f["freeze"]; ok {
		m, err := l.mapping("freeze", v)
		if err != nil {
			return err
		}
		ff, err := l.fields("freeze", m, "expires_after_runs")
		if err != nil {
			return err
		}
		if v, ok := ff["expires_after_runs"]; ok {
			if cfg.Freeze.ExpiresAfterRuns, err = l.integer("freeze.expires_after_runs", v, 1, flakegate.MaxFreezeRuns); err != nil {
				return err
			}
		}
	}
	cfg.Sandbox = Sandbox{Mode: SandboxAuto, Limits: DefaultLimits()}
	if v, ok := f["sandbox"]; ok {
		if cfg.Sandbox, err = l.sandbox(v); err != nil {
			return err
		}
	}
	if v, ok := f["prepare"]; ok {
		if cfg.Prepare, err = l.prepare("prepare", v); err != nil {
			return err
		}
	}
	return nil
}

// properties reads the properties list: required unless suites are there.
func (l *loader) properties(cfg *Config, root *ast.MappingNode, f map[string]ast.Node) error {
	v, ok := f["properties"]
	if !ok && len(cfg.Suites) > 0 {
		return nil
	}
	if !ok {
		return l.errf("properties", root, "missing; want a list of properties (or suites)")
	}
	seq, err := l.sequence("properties", v)
	if err != nil {
		return err
	}
	if len(seq.Values) == 0 {
		return l.errf("properties", v, "empty; want at least one property")
	}
	seen := map[string]string{}
	for i, pn := range seq.Values {
		key := fmt.Sprintf("properties[%d]", i)
		p, err := l.property(key, pn, cfg.RandomSeeds, cfg.FlakeProbeRuns)
		if err != nil {
			return err
		}
		if p.Prepare == nil {
			p.Prepare = cfg.Prepare
		}
		p.Index = i
		// A property is a test: (path, name) names it once.
		id := p.Path + "\x00" + p.Name
		if prev, dup := seen[id]; dup {
			if p.Name == "" {
				return l.errf(key, pn, "same path %s as %s and neither has a name; give each entry its test's name (name: ...), or merge their seeds", p.Path, prev)
			}
			return l.errf(key, pn, "same path %s and name %q as %s; each test is listed once (merge their seeds)", p.Path, p.Name, prev)
		}
		seen[id] = key
		cfg.Properties = append(cfg.Properties, p)
	}
	return nil
}

func (l *loader) property(key string, n ast.Node, randomSeeds, probeRuns int) (Property, error) {
	p := Property{RandomSeeds: randomSeeds, FlakeProbeRuns: probeRuns}
	m, err := l.mapping(key, n)
	if err != nil {
		return p, err
	}
	f, err := l.fields(key, m, "path", "name", "fixture", "generator", "seeds", "random_seeds", "watch", "pass_marker", "fail_marker", "run", "wall_budget", "samples", "prepare", "flake_probe_runs", "framework", "batch")
	if err != nil {
		return p, err
	}
	for _, req := range []string{"path", "run", "wall_budget"} {
		if _, ok := f[req]; !ok {
			return p, l.errf(join(key, req), m, "missing (required)")
		}
	}
	if p.Path, err = l.repoPath(join(key, "path"), f["path"]); err != nil {
		return p, err
	}
	if v, ok := f["name"]; ok {
		if p.Name, err = l.testName(join(key, "name"), v); err != nil {
			return p, err
		}
	}
	if v, ok := f["fixture"]; ok {
		if p.Fixture, err = l.repoPath(join(key, "fixture"), v); err != nil {
			return p, err
		}
	}
	if v, ok := f["generator"]; ok {
		if p.Generator, err = l.repoPath(join(key, "generator"), v); err != nil {
			return p, err
		}
	}
	if v, ok := f["random_seeds"]; ok {
		if p.RandomSeeds, err = l.integer(join(key, "random_seeds"), v, 0, MaxRandomSeeds); err != nil {
			return p, err
		}
	}
	if v, ok := f["seeds"]; ok {
		if p.Seeds, err = l.seeds(join(key, "seeds"), v); err != nil {
			return p, err
		}
	} else if p.RandomSeeds == 0 {
		return p, l.errf(join(key, "seeds"), m, "missing; list seeds, or draw some with random_seeds: N")
	}
	if v, ok := f["watch"]; ok {
		if p.Watch, err = l.globs(join(key, "watch"), v); err != nil {
			return p, err
		}
	}
	if err := l.markers(key, f, &p); err != nil {
		return p, err
	}
	if p.Run, err = l.run(join(key, "run"), f["run"]); err != nil {
		return p, err
	}
	if err := l.framework(key, f, &p); err != nil {
		return p, err
	}
	if p.Fixture == "" && template.Uses(p.Run, "fixture") {
		return p, l.errf(join(key, "fixture"), m, "missing, but run uses {fixture}")
	}
	if p.Name == "" && template.Uses(p.Run, "name") {
		return p, l.errf(join(key, "name"), m, "missing, but run uses {name}")
	}
	if p.WallBudget, err = l.duration(join(key, "wall_budget"), f["wall_budget"]); err != nil {
		return p, err
	}
	if v, ok := f["prepare"]; ok {
		if p.Prepare, err = l.prepare(join(key, "prepare"), v); err != nil {
			return p, err
		}
	}
	if v, ok := f["samples"]; ok {
		if p.Samples, err = l.integer(join(key, "samples"), v, 1, math.MaxInt32); err != nil {
			return p, err
		}
	} else if template.Uses(p.Run, "samples") {
		return p, l.errf(join(key, "samples"), m, "missing, but run uses {samples}")
	}
	return p, nil
}

// markers reads pass_marker, fail_marker and flake_probe_runs.
func (l *loader) markers(key string, f map[string]ast.Node, p *Property) error {
	var err error
	if v, ok := f["pass_marker"]; ok {
		s, err := l.str(join(key, "pass_marker"), v)
		if err != nil {
			return err
		}
		if s == "" {
			return l.errf(join(key, "pass_marker"), v, "empty; want a regexp the passing output prints")
		}
		if p.PassMarker, err = regexp.Compile("(?m)" + s); err != nil {
			return l.errf(join(key, "pass_marker"), v, "not a regexp: %v", err)
		}
	}
	if v, ok := f["flake_probe_runs"]; ok {
		if p.FlakeProbeRuns, err = l.integer(join(key, "flake_probe_runs"), v, 0, MaxFlakeProbeRuns); err != nil {
			return err
		}
	}
	if v, ok := f["fail_marker"]; ok {
		s, err := l.str(join(key, "fail_marker"), v)
		if err != nil {
			return err
		}
		if s == "" {
			return l.errf(join(key, "fail_marker"), v, "empty; want a regexp the failing output prints")
		}
		if p.FailMarker, err = regexp.Compile("(?m)" + s); err != nil {
			return l.errf(join(key, "fail_marker"), v, "not a regexp: %v", err)
		}
	}
	return nil
}

// testName reads a test id: one line of printable text that cannot be
// read as an option.
func (l *loader) testName(key string, n ast.Node) (string, error) {
	s, err := l.str(key, n)
	if err != nil {
		return "", err
	}
	switch {
	case s == "" || strings.TrimSpace(s) != s:
		return "", l.errf(key, n, "want the test's name without surrounding spaces, got %q", s)
	case len(s) > MaxNameLength:
		return "", l.errf(key, n, "longer than %d bytes", MaxNameLength)
	case strings.HasPrefix(s, "-"):
		return "", l.errf(key, n, "name %q starts with '-' and could be read as an option", s)
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return "", l.errf(key, n, "name %q holds a control character", s)
		}
	}
	return s, nil
}

// globs reads a list of repo-relative watch globs.
func (l *loader) globs(key string, n ast.Node) ([]string, error) {
	seq, err := l.sequence(key, n)
	if err != nil {
		return nil, err
	}
	var out []string
	for i, gn := range seq.Values {
		k := fmt.Sprintf("%s[%d]", key, i)
		s, err := l.str(k, gn)
		if err != nil {
			return nil, err
		}
		g, err := CleanGlob(s)
		if err != nil {
			return nil, l.errf(k, gn, "%v", err)
		}
		out = append(out, g)
	}
	return out, nil
}

func (l *loader) sequence(key string, n ast.Node) (*ast.SequenceNode, error) {
	n, err := l.node(key, n)
	if err != nil {
		return nil, err
	}
	s, ok := n.(*ast.SequenceNode)
	if !ok {
		return nil, l.errf(key, n, "want a list, got %s", kind(n))
	}
	return s, nil
}

func (l *loader) integer(key string, n ast.Node, min, max int) (int, error) {
	n, err := l.node(key, n)
	if err != nil {
		return 0, err
	}
	in, ok := n.(*ast.IntegerNode)
	if !ok {
		return 0, l.errf(key, n, "want an integer, got %s", kind(n))
	}
	v, err := strconv.ParseInt(in.Token.Value, 10, 64)
	if err != nil {
		return 0, l.errf(key, n, "want a decimal integer, got %q", in.Token.Value)
	}
	if v < int64(min) || v > int64(max) {
		return 0, l.errf(key, n, "%d is out of range [%d, %d]", v, min, max)
	}
	return int(v), nil
}

// boolean reads true or false.
func (l *loader) boolean(key string, n ast.Node) (bool, error) {
	v, err := l.node(key, n)
	if err != nil {
		return false, err
	}
	b, ok := v.(*ast.BoolNode)
	if !ok {
		return false, l.errf(key, v, "want true or false, got %s", kind(v))
	}
	return b.Value, nil
}

func (l *loader) str(key string, n ast.Node) (string, error) {
	n, err := l.node(key, n)
	if err != nil {
		return "", err
	}
	s, ok := n.(*ast.StringNode)
	if !ok {
		return "", l.errf(key, n, "want a string, got %s", kind(n))
	}
	return s.Value, nil
}

func (l *loader) repoPath(key string, n ast.Node) (string, error) {
	s, err := l.str(key, n)
	if err != nil {
		return "", err
	}
	c, err := CleanRepoPath(s)
	if err != nil {
		return "", l.errf(key, n, "%v", err)
	}
	return c, nil
}

var decimalRe = lazyre.New(`^-?[0-9]+$`)

// seeds reads a list of seeds. An unquoted number is an integer seed (any
// size, digits kept); a quoted scalar or a plain word is a seed string,
// so 1402 and "1402" stay apart as they do in records. A seed starting
// with '-' is refused: as its own argument it would read as an option.
func (l *loader) seeds(key string, n ast.Node) ([]flakegate.Seed, error) {
	seq, err := l.sequence(key, n)
	if err != nil {
		return nil, err
	}
	if len(seq.Values) == 0 {
		return nil, l.errf(key, n, "empty; want at least one seed")
	}
	var out []flakegate.Seed
	seen := map[flakegate.Seed]bool{}
	for i, sn := range seq.Values {
		k := fmt.Sprintf("%s[%d]", key, i)
		sn, err := l.node(k, sn)
		if err != nil {
			return nil, err
		}
		var seed flakegate.Seed
		switch v := sn.(type) {
		case *ast.IntegerNode:
			if !decimalRe.MatchString(v.Token.Value) {
				return nil, l.errf(k, sn, "write the integer seed %q in decimal digits", v.Token.Value)
			}
			seed, err = flakegate.ParseSeed(v.Token.Value)
		case *ast.StringNode:
			if v.Token.Type == token.StringType && decimalRe.MatchString(v.Value) {
				seed, err = flakegate.ParseSeed(v.Value) // an integer too large for int64
			} else {
				seed, err = stringSeed(v.Value)
			}
		default:
			return nil, l.errf(k, sn, "want an integer or a string seed, got %s", kind(sn))
		}
		if err != nil {
			return nil, l.errf(k, sn, "%s", flakegateMessage(err))
		}
		if strings.HasPrefix(seed.String(), "-") {
			return nil, l.errf(k, sn, "seed %s starts with '-' and could be read as an option", seed.String())
		}
		if seen[seed] {
			return nil, l.errf(k, sn, "seed %s is listed twice", string(seed))
		}
		seen[seed] = true
		out = append(out, seed)
	}
	return out, nil
}

var seedStrRe = lazyre.New(`^[A-Za-z0-9._:-]+$`)

func stringSeed(s string) (flakegate.Seed, error) {
	if !seedStrRe.MatchString(s) {
		return "", fmt.Errorf("seed %q: want an integer or a string of [A-Za-z0-9._:-]", s)
	}
	return flakegate.Seed(strconv.Quote(s)), nil
}

func flakegateMessage(err error) string {
	if e, ok := err.(*flakegate.Error); ok {
		return e.Message
	}
	return err.Error()
}

func (l *loader) run(key string, n ast.Node) ([]string, error) {
	seq, err := l.sequence(key, n)
	if err != nil {
		if _, isStr := n.(*ast.StringNode); isStr {
			return nil, l.errf(key, n, "want an argv list such as [\"pytest\", \"-q\", \"{path}\"], not a shell string")
		}
		return nil, err
	}
	if len(seq.Values) == 0 {
		return nil, l.errf(key, n, "empty; want the command and its arguments")
	}
	var argv []string
	for i, an := range seq.Values {
		k := fmt.Sprintf("%s[%d]", key, i)
		an, err := l.node(k, an)
		if err != nil {
			return nil, err
		}
		var s string
		switch v := an.(type) {
		case *ast.StringNode:
			s = v.Value
		case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode:
			s = v.GetToken().Value // "-n", 4 is an argument, not a number
		default:
			return nil, l.errf(k, an, "want a string, got %s", kind(an))
		}
		if strings.ContainsRune(s, 0) {
			return nil, l.errf(k, an, "holds a NUL byte")
		}
		argv = append(argv, s)
	}
	if argv[0] == "" || strings.Contains(argv[0], "{") {
		return nil, l.errf(key+"[0]", seq.Values[0], "the command must be a fixed program name, not %q", argv[0])
	}
	// template's own parser: what config accepts is what Expand fills.
	if err := template.Check(argv); err != nil {
		return nil, l.errf(key, n, "%s; %s", flakegateMessage(err), flakegate.ErrorHint(err))
	}
	return argv, nil
}

// duration reads "60s", "1m30s", "500ms" or a plain number of seconds.
func (l *loader) duration(key string, n ast.Node) (time.Duration, error) {
	n, err := l.node(key, n)
	if err != nil {
		return 0, err
	}
	var d time.Duration
	switch v := n.(type) {
	case *ast.IntegerNode:
		s, err := strconv.ParseInt(v.Token.Value, 10, 64)
		if err != nil || s > int64(MaxWallBudget/time.Second) {
			return 0, l.errf(key, n, "want a duration such as 60s, got %q", v.Token.Value)
		}
		d = time.Duration(s) * time.Second
	case *ast.StringNode:
		d, err = time.ParseDuration(v.Value)
		if err != nil {
			return 0, l.errf(key, n, "want a duration such as 60s or 1m30s, got %q", v.Value)
		}
	default:
		return 0, l.errf(key, n, "want a duration such as 60s, got %s", kind(n))
	}
	if d <= 0 || d > MaxWallBudget {
		return 0, l.errf(key, n, "%s is out of range (0, %s]", d, MaxWallBudget)
	}
	return d, nil
}

func kind(n ast.Node) string {
	switch n.(type) {
	case *ast.IntegerNode:
		return "an integer"
	case *ast.FloatNode, *ast.InfinityNode, *ast.NanNode:
		return "a float"
	case *ast.BoolNode:
		return "a boolean"
	case *ast.StringNode, *ast.LiteralNode:
		return "a string"
	case *ast.NullNode:
		return "null"
	case *ast.SequenceNode:
		return "a list"
	case *ast.MappingNode, *ast.MappingValueNode:
		return "a mapping"
	}
	if n == nil {
		return "nothing"
	}
	return n.Type().String()
}
