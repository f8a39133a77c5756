package postgres

import (
	"context"
	"errors"
	"net"
	"net/url"
	"slices"
	"strings"

	"github.com/flakegate/flakegate"
	"github.com/jackc/pgx/v5/pgconn"
)

// hintReach is the hint for every error that means the server could not be
// reached or went away.
const hintReach = "check that PostgreSQL is running and reachable, and the DSN given by --ledger or FLAKEGATE_LEDGER"

// FormatError translates a pgx, pgconn or network error into a
// *flakegate.Error with code EINTERNAL (exit 3), naming the operation and
// the store (its DSN without password) and saying what to try. An error
// that already is a *flakegate.Error is returned as is. The DSN's password
// never appears in the result.
func (s *Store) FormatError(op string, err error) error {
	return formatError(op, s.redacted, s.password, err)
}

func formatError(op, where, password string, err error) error {
	if err == nil {
		return nil
	}
	var fe *flakegate.Error
	if errors.As(err, &fe) {
		return err
	}
	e := &flakegate.Error{Code: flakegate.EINTERNAL, Op: op, Path: where}

	var pgErr *pgconn.PgError
	var connErr *pgconn.ConnectError
	var netErr net.Error
	switch {
	case errors.Is(err, context.Canceled):
		e.Message = "interrupted; the transaction was rolled back"
	case errors.Is(err, context.DeadlineExceeded) || pgconn.Timeout(err):
		e.Message = "PostgreSQL did not answer in time"
		e.Hint = hintReach
	case errors.As(err, &pgErr):
		e.Message, e.Hint = serverMessage(pgErr)
		if pgErr.Code == "22021" || pgErr.Code == "22P05" {
			// A NUL byte or invalid UTF-8 in a text value: the input's fault.
			e.Code = flakegate.EINVALID
		}
	case errors.As(err, &connErr):
		e.Message = "cannot connect to PostgreSQL: " + cause(connErr)
		e.Hint = hintReach
	case errors.As(err, &netErr), errors.Is(err, net.ErrClosed):
		e.Message = "lost the connection to PostgreSQL: " + err.Error()
		e.Hint = hintReach
	default:
		e.Message = "PostgreSQL: " + err.Error()
		if strings.Contains(err.Error(), "EOF") || strings.Contains(err.Error(), "conn closed") {
			e.Message = "lost the connection to PostgreSQL: " + err.Error()
			e.Hint = hintReach
		}
	}
	e.Message = scrub(e.Message, password)
	return e
}

// serverMessage says what an error reported by the server means.
func serverMessage(pgErr *pgconn.PgError) (msg, hint string) {
	msg = pgErr.Message + " (SQLSTATE " + pgErr.Code + ")"
	switch {
	case strings.HasPrefix(pgErr.Code, "08"), pgErr.Code == "57P01", pgErr.Code == "57P02", pgErr.Code == "57P03":
		// connection exception, admin shutdown, crash shutdown, cannot connect now
		return "PostgreSQL is unavailable: " + msg, hintReach
	case pgErr.Code == "28P01", pgErr.Code == "28000":
		return "PostgreSQL refused the login: " + msg, "check the user and password in the DSN (or PGPASSWORD, ~/.pgpass)"
	case pgErr.Code == "3D000":
		return msg, "create the database first (createdb), or fix the database name in the DSN"
	case pgErr.Code == "42501":
		return "permission denied: " + msg, "grant the role the privileges listed in docs/postgres.md; 'flakegate db migrate' needs CREATE on the database"
	case pgErr.Code == "42P01", pgErr.Code == "3F000":
		return "the flakegate schema is missing: " + msg, "run 'flakegate db migrate --ledger DSN' with a role that has CREATE on the database"
	case pgErr.Code == "22021", pgErr.Code == "22P05":
		return "PostgreSQL cannot store this text: " + msg, "property paths, seeds, digests and names must be valid UTF-8 without NUL bytes"
	case pgErr.Code == "55P03":
		return "timed out waiting for another runner's ledger change: " + msg, "retry; if it persists, look for a stuck session in pg_stat_activity (application_name flakegate)"
	case pgErr.Code == "25P03":
		return "the session sat idle inside a transaction and the server ended it: " + msg, hintReach
	case pgErr.Code == "53300":
		return "PostgreSQL has no free connection slots: " + msg, "raise max_connections or lower the number of runners connecting at once"
	}
	return "PostgreSQL: " + msg, ""
}

// cause is the innermost useful text of a connect error: pgx's own text
// repeats user and database, which the error's Path already shows.
// It tries every address (and with sslmode=prefer, TLS then plain), one
// line per attempt: repeated lines are said once.
func cause(err *pgconn.ConnectError) string {
	text := err.Error()
	if inner := errors.Unwrap(err); inner != nil {
		text = inner.Error()
	}
	var lines []string
	for _, l := range strings.Split(text, "\n") {
		if l = strings.TrimSpace(l); l != "" && !slices.Contains(lines, l) {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "; ")
}

// Redact returns dsn with its password (in the userinfo or as a password=
// parameter) replaced by "xxxxx". A DSN that does not parse as a URL is
// replaced whole, so nothing secret leaks from a typo.
func Redact(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return "postgres://(unparseable DSN)"
	}
	q := u.Query()
	if q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
}

// password returns the DSN's password, so that messages can be scrubbed
// of it even when a library quotes the DSN.
func password(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return ""
	}
	if p, ok := u.User.Password(); ok {
		return p
	}
	return u.Query().Get("password")
}

// scrub replaces the password in s. A weak one (flakegate.WeakSecret,
// such as "flakegate", which is also the database's name in many
// setups) is replaced only as a whole token of a DSN (":password@",
// "password=password"), so that other words stay as they were.
func scrub(s, password string) string {
	if password == "" {
		return s
	}
	if !flakegate.WeakSecret(password) {
		return strings.ReplaceAll(s, password, "xxxxx")
	}
	for _, tok := range [][2]string{{":" + password + "@", ":xxxxx@"}, {"password=" + password, "password=xxxxx"}} {
		s = strings.ReplaceAll(s, tok[0], tok[1])
	}
	return s
}
