// Package site is where a check's attempts and a replay's command run:
// the base they read (the repository and its config), the sandbox and
// environment built from the config's sandbox block and probed on this
// host, the repository's Go caches given to it, the clean worktrees the
// attempts run in, and what check and replay share of a prepare's layer
// and of the kept layers: a prepare's layer is built here too.
//
// The files:
//
//	base.go       Base: the repository and the config at the base, read and
//	              never run (plan, explain-watch, doctor and the check)
//	isolation.go  Isolation and BuildIsolation: the sandbox, its shared
//	              and hidden paths, the attempts' environment and the
//	              secrets (SecretValues); Probe refuses what the host
//	              cannot enforce
//	probe.go      ProbeTrees: the isolation this host gives, and whether the
//	              attempts leave their trees unwritten (overlay or copy);
//	              SandboxFor: one attempt's sandbox in a tree
//	gocache.go    SetupGoCaches: the repository's Go caches in the sandbox;
//	              MirrorGoCaches (probe.go) beside trees on a tmpfs
//	worktrees.go  Worktrees, WorkerTrees and Tree: the clean checkouts each
//	              worker runs in, opened under their lock, proven, sealed;
//	              clean.go resets one (ResetClean), normalize_linux.go undoes
//	              what git leaves in a tree reset in full (modes, user.*
//	              xattrs)
//	treeroot.go   ChooseTreeRoot: where the trees live, on disk or on a
//	              tmpfs without swap (ShmRoot), and the room there
//	layergc.go    the kept layers (PreparedRoot): their bound, locks and
//	              collection (CollectLayers, TouchLayer)
//	layer.go      PrepareSHA256, LayerKey, LayerMeta and ReadLayerMeta: a
//	              prepare's layer, found by check and replay alike; ShowAt
//	prepare.go    PrepareTree: a prepare run in its tree and kept as a layer
//	              (or found kept); PrepareFailed, why one failed (check and
//	              replay alike)
package site
