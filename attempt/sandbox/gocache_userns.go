package sandbox

import "path/filepath"

// userGoCache gives the helper of a caller without root (spec, Userns)
// the attempt's Go build cache, as root has it: the repository's cache
// (s.GoCache) as the read-only lower layer of an overlay in the helper's
// own user namespace, whose upper layer is on the attempt's tmpfs and
// goes with it; for the fill, the cache itself. It returns the folder
// bwrap binds at SandboxGoCache, "" for none. bwrap before 0.9 cannot
// lay an overlay itself (no --overlay-src); the helper can.
func (spec *helperSpec) userGoCache(s *Sandbox, layer string) string {
	switch {
	case s.GoCache == "" || layer == "":
		return ""
	case s.FillGoCache:
		spec.FillGoCache = s.GoCache
	default:
		spec.GoCache = []cacheLayer{{Src: s.GoCache}} // flakegate's user's files: the namespace's own
	}
	return filepath.Join(layer, "gocache")
}
