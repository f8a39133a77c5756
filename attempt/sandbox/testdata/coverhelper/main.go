// Command coverhelper runs sandboxed attempts the way flakegate does,
// its own sandbox helper, for TestBuiltHelperCoverage, which builds it
// with go build -cover: coverhelper BWRAP ROOT TREE runs three attempts
// in TREE (ROOT holds it) and prints each outcome as a line of JSON.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/flakegate/flakegate/attempt"
	"github.com/flakegate/flakegate/attempt/sandbox"
)

func main() {
	sandbox.MaybeOverlayExec() // a re-executed coverhelper is the helper, and ends here
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: coverhelper BWRAP ROOT TREE")
		os.Exit(2)
	}
	bwrap, root, tree := os.Args[1], os.Args[2], os.Args[3]
	sb := sandbox.New(sandbox.Sandbox{Bwrap: bwrap, Tree: tree, Home: "/root",
		Limits: sandbox.Limits{Memory: 512 << 20, Pids: 256, Tmp: 64 << 20, Disk: 64 << 20}})
	defer sb.Close()
	env := []string{"PATH=/usr/bin:/bin", "HOME=/root"}
	if err := sb.Probe(context.Background(), root, env, true); err != nil {
		fmt.Fprintln(os.Stderr, "coverhelper: the sandbox cannot run here:", err)
		os.Exit(3)
	}
	enc := json.NewEncoder(os.Stdout)
	// The first helper is started for its attempt, the others are
	// standbys; the third attempt has a GOCOVERDIR of its own.
	for _, env := range [][]string{env, env, append(env, "GOCOVERDIR=/attempt/own")} {
		o := attempt.Run(context.Background(), attempt.Command{Argv: []string{"sh", "-c", "echo hi; env"},
			Dir: tree, Env: env, Sandbox: sb, WallBudget: time.Minute})
		if err := enc.Encode(o); err != nil {
			fmt.Fprintln(os.Stderr, "coverhelper:", err)
			os.Exit(1)
		}
	}
}
