package runner

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

// CheckTemplate reports the first placeholder of tmpl that Expand does not
// know, without needing values: config validates run templates with it.
func CheckTemplate(tmpl []string) error {
	for i, arg := range tmpl {
		for _, name := range Placeholders(arg) {
			if _, ok := (Vars{}).lookup(name); !ok {
				return expandErr("argument "+strconv.Itoa(i)+" "+strconv.Quote(arg)+": unknown placeholder {"+name+"}", placeholderHint)
			}
		}
	}
	return nil
}

// UsesPlaceholder reports whether any argument of tmpl names {name}.
func UsesPlaceholder(tmpl []string, name string) bool {
	for _, arg := range tmpl {
		if slices.Contains(Placeholders(arg), name) {
			return true
		}
	}
	return false
}
