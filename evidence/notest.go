package evidence

// NoTestMarkers are output lines that mean an exit 0 ran no test: go
// test -v ("testing: warning: no tests to run"), go test without -v
// ("ok  pkg  0.01s [no tests to run]"), and pytest ("no tests ran",
// which pytest also signals with exit 5). An attempt given them
// (attempt.Command.NoTestMarkers) whose output holds one anywhere is an
// error, never a pass. The attempt itself knows no framework: these are
// evidence's, and a caller passes them to the attempts they are meant for.
var NoTestMarkers = []string{"testing: warning: no tests to run", "[no tests to run]", "no tests ran"}
