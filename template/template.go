// Package template fills the placeholders of an argv template ({path},
// {name}, {seed}, {samples}, {fixture}), the command a config entry runs.
// It starts nothing: config checks templates with it, and check and
// replay expand them before a process runs.
package template

import (
	"slices"
	"strconv"
	"strings"
)

// Placeholders returns the placeholder names of one template argument, in
// order, as Expand reads them: a name is a letter followed by letters,
// digits or underscores, between braces; other braces are text.
func Placeholders(arg string) []string {
	var names []string
	for {
		open := strings.IndexByte(arg, '{')
		if open < 0 {
			return names
		}
		n := placeholderLen(arg[open+1:])
		if n == 0 {
			arg = arg[open+1:]
			continue
		}
		names = append(names, arg[open+1:open+1+n])
		arg = arg[open+1+n+1:]
	}
}

// Check reports the first placeholder of tmpl that Expand does not
// know, without needing values: config validates run templates with it.
func Check(tmpl []string) error {
	for i, arg := range tmpl {
		for _, name := range Placeholders(arg) {
			if _, ok := (Vars{}).lookup(name); !ok {
				return expandErr("argument "+strconv.Itoa(i)+" "+strconv.Quote(arg)+": unknown placeholder {"+name+"}", placeholderHint)
			}
		}
	}
	return nil
}

// Uses reports whether any argument of tmpl names {name}.
func Uses(tmpl []string, name string) bool {
	for _, arg := range tmpl {
		if slices.Contains(Placeholders(arg), name) {
			return true
		}
	}
	return false
}
