// The base of a check, read and never run: the repository, the revision
// and the config at it, which plan, explain-watch and doctor start from as
// the check does.

package site

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/git"
)

// BaseOptions name a repository and the revision whose config is read:
// Dir, Base, ConfigPath and Git mean what they mean for check.Run.
type BaseOptions struct {
	Dir, Base, ConfigPath, Git string
}

// Base is a repository and the config at one revision of it, read as a
// check reads it (a patch must not choose its own gate).
type Base struct {
	Git        *git.Client
	Top        string // the work tree's top folder
	Common     string // the git common directory: the default store lives there
	SHA        string // the base revision
	ConfigPath string // the config's path in the repository, cleaned
	ConfigSHA  string // sha256 of the config's bytes at the base
	Config     *config.Config
}

// ErrNoBase is the error of a blank base revision. The CLI refuses one
// first, naming its flag.
var ErrNoBase = &flakegate.Error{Code: flakegate.EINVALID, Op: "check", Message: "no base revision was given",
	Hint: "name the revision the candidate is measured against (origin/main, say)"}

// OpenBase opens the repository at opts.Dir, resolves opts.Base and reads
// the config there; it runs nothing.
func OpenBase(ctx context.Context, opts BaseOptions) (*Base, error) {
	if strings.TrimSpace(opts.Base) == "" {
		return nil, ErrNoBase
	}
	b, err := OpenRepo(ctx, opts.Dir, opts.Git)
	if err != nil {
		return nil, err
	}
	if err := b.Resolve(ctx, opts.Base); err != nil {
		return nil, err
	}
	if err := b.LoadConfig(ctx, opts.ConfigPath); err != nil {
		return nil, err
	}
	return b, nil
}

// OpenRepo opens the repository at dir ("" is the working folder) with
// the git binary gitBin ("" is git on PATH): its top folder and its git
// common directory.
func OpenRepo(ctx context.Context, dir, gitBin string) (*Base, error) {
	if dir == "" {
		dir = "."
	}
	b := &Base{Git: &git.Client{Dir: dir, Git: gitBin}}
	var err error
	if b.Top, err = b.Git.TopLevel(ctx); err != nil {
		return b, err
	}
	if b.Common, err = b.Git.CommonDir(ctx); err != nil {
		return b, err
	}
	return b, nil
}

// Resolve sets the base revision to rev.
func (b *Base) Resolve(ctx context.Context, rev string) error {
	sha, err := ResolveRev(ctx, b.Git, "--base", rev)
	if err != nil {
		return err
	}
	b.SHA = sha
	return nil
}

// ResolveRev is rev's commit; a revision that does not resolve is a
// usage error of the check's option flag.
func ResolveRev(ctx context.Context, g *git.Client, flag, rev string) (string, error) {
	sha, err := g.RevParse(ctx, rev)
	if err != nil {
		var fe *flakegate.Error
		if errors.As(err, &fe) && fe.Code == flakegate.EINVALID {
			return "", &flakegate.Error{Code: flakegate.EINVALID, Op: "check " + flag, Message: fe.Message, Hint: fe.Hint}
		}
		return "", err
	}
	return sha, nil
}

// LoadConfig reads the config at path ("" is flakegate.yaml) at the base
// revision. ConfigPath is set even when the config does not load.
func (b *Base) LoadConfig(ctx context.Context, path string) error {
	if path == "" {
		path = config.DefaultPath
	}
	clean, err := config.CleanRepoPath(path)
	if err != nil {
		return &flakegate.Error{Code: flakegate.EINVALID, Op: "check --config", Path: path, Message: err.Error(),
			Hint: "give the config's path relative to the repository root"}
	}
	b.ConfigPath = clean
	raw, err := b.Git.Show(ctx, b.SHA, clean)
	if err != nil {
		switch flakegate.ErrorCode(err) {
		case flakegate.ENOTFOUND:
			return &flakegate.Error{Code: flakegate.EINVALID, Op: "check", Path: clean,
				Message: fmt.Sprintf("no such file at the base revision %s", flakegate.ShortSHA(b.SHA)),
				Hint:    "commit " + clean + " on the base branch (the config is always read from the base), or pass --config PATH"}
		case flakegate.EINVALID:
			return &flakegate.Error{Code: flakegate.EINVALID, Op: "check", Path: clean, Message: "cannot read the config at the base revision", Err: err}
		}
		return err
	}
	cfg, err := config.LoadWith(raw, clean, ShowAt(ctx, b.Git, b.SHA))
	if err != nil {
		return err
	}
	b.ConfigSHA, b.Config = flakegate.SHA256Hex(raw), cfg
	return nil
}

// Holds reports whether path, its links resolved, is inside the
// repository: its work tree or its git folder. A program there is the
// checkout's (or one an earlier command left in flakegate's state), and
// no command runs one outside the sandbox.
func (b *Base) Holds(path string) bool {
	if b == nil {
		return false
	}
	for _, dir := range []string{b.Top, b.Common} {
		if dir != "" && Within(path, dir) {
			return true
		}
	}
	return false
}
