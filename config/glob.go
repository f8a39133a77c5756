package config

import (
	"fmt"
	"path"
	"strings"
)

// CleanGlob checks a watch glob: repo-relative like a path, with "*", "?"
// and "[...]" inside a segment and "**" as a whole segment for any number
// of segments. It returns the glob cleaned.
func CleanGlob(g string) (string, error) {
	c, err := CleanRepoPath(g)
	if err != nil {
		return "", err
	}
	for _, seg := range strings.Split(c, "/") {
		if seg == "**" {
			continue
		}
		if strings.Contains(seg, "**") {
			return "", fmt.Errorf("glob %q: ** must be a whole path segment (a/**/b)", g)
		}
		if _, err := path.Match(seg, ""); err != nil {
			return "", fmt.Errorf("glob %q: %v", g, err)
		}
	}
	return c, nil
}

// MatchGlob reports whether the repo path p matches the glob g: "*", "?"
// and classes match inside one segment, a "**" segment matches zero or
// more whole segments. A glob without wildcards matches only itself.
func MatchGlob(g, p string) bool {
	return matchSegs(strings.Split(g, "/"), strings.Split(path.Clean(p), "/"))
}

func matchSegs(g, p []string) bool {
	for len(g) > 0 {
		if g[0] == "**" {
			for i := 0; i <= len(p); i++ {
				if matchSegs(g[1:], p[i:]) {
					return true
				}
			}
			return false
		}
		if len(p) == 0 {
			return false
		}
		if ok, err := path.Match(g[0], p[0]); err != nil || !ok {
			return false
		}
		g, p = g[1:], p[1:]
	}
	return len(p) == 0
}
