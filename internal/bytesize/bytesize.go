// Package bytesize reads and writes sizes in binary units (4GiB, 512MiB),
// the way the config's sandbox.limits spells them.
package bytesize

import (
	"fmt"
	"strconv"
	"strings"
)

// units are the units of a size, as powers of 1024, largest first.
var units = []struct {
	name string
	n    int64
}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"B", 1}}

// Parse reads a size such as 4GiB, 512MiB or 1048576 (bytes).
func Parse(s string) (int64, error) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	unit := strings.TrimSpace(s[i:])
	mult := int64(0)
	if unit == "" {
		mult = 1
	}
	for _, u := range units {
		if u.name == unit {
			mult = u.n
		}
	}
	if i == 0 || mult == 0 {
		return 0, fmt.Errorf("%q is not a size: want a whole number with a unit, such as 512MiB or 4GiB (units B, KiB, MiB, GiB, TiB)", s)
	}
	n, err := strconv.ParseInt(s[:i], 10, 64)
	if err != nil || n > (1<<62)/mult {
		return 0, fmt.Errorf("%q is too large", s)
	}
	return n * mult, nil
}

// Format writes a size the way Parse reads it, in the largest unit that
// divides it.
func Format(n int64) string {
	for _, u := range units {
		if n >= u.n && n%u.n == 0 {
			return strconv.FormatInt(n/u.n, 10) + u.name
		}
	}
	return strconv.FormatInt(n, 10) + "B"
}
