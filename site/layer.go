// What check and replay share of a prepare's layer: the digest of the
// prepare, the key of its layer of a commit (the replay finds the
// check's layer by it) and the meta.json the layer keeps.

package site

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/git"
)

// LayerMeta is what a cached layer says about the prepare that built it.
type LayerMeta struct {
	Command  []string  `json:"command"`
	Seconds  float64   `json:"seconds"`
	ExitCode int       `json:"exit_code"`
	At       time.Time `json:"at"`
	Tail     string    `json:"tail"`
	Side     string    `json:"side,omitempty"`
	Tree     string    `json:"tree,omitempty"` // the commit of the tree it prepared
}

// PrepareSHA256 is the digest of a prepare's command and environment
// (the records' extra key "prepare_sha256").
func PrepareSHA256(p *config.Prepare, env []string) string {
	b, _ := json.Marshal(struct {
		Run     []string `json:"run"`
		Network bool     `json:"network"`
		Env     []string `json:"env"`
		Allow   []string `json:"allow,omitempty"`
	}{p.Run, p.Network, env, p.Allow})
	return flakegate.SHA256Hex(b)
}

// LayerKey names the prepared layer of a tree's commit for one
// prepare (check and replay alike: the replay finds the check's layer).
func LayerKey(treeSHA, prepareSHA, isolation, goCache string, uid int, budget time.Duration) string {
	kb, _ := json.Marshal(struct {
		Tree, Prepare, Isolation, GoCache, Version string
		UID                                        int
		Budget                                     float64
	}{treeSHA, prepareSHA, isolation, goCache, flakegate.Version, uid, budget.Seconds()})
	return flakegate.SHA256Hex(kb)
}

func ReadLayerMeta(dir string) (LayerMeta, bool) {
	var m LayerMeta
	b, err := os.ReadFile(filepath.Join(dir, "meta.json"))
	if err != nil || json.Unmarshal(b, &m) != nil {
		return m, false
	}
	return m, true
}

// ShowAt reads repository files at rev for config.LoadWith.
func ShowAt(ctx context.Context, g *git.Client, rev string) func(string) ([]byte, bool) {
	return func(rel string) ([]byte, bool) {
		b, err := g.Show(ctx, rev, rel)
		return b, err == nil
	}
}
