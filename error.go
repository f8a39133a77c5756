package flakegate

import (
	"context"
	"errors"
	"fmt"
)

// Error codes. The CLI maps them to exit codes in one place.
const (
	EINVALID  = "invalid"  // bad input or usage: exit 2
	ENOTFOUND = "notfound" // the thing asked for does not exist
	ECONFLICT = "conflict" // it exists already (a freeze for the triple)
	EREJECT   = "reject"   // the gate said no: exit 1
	EINTERNAL = "internal" // flakegate itself failed: exit 3
)

// Error is the one error type users see: what failed (Op), on which input
// (Path), why (Message) and what to try (Hint).
type Error struct {
	Code    string
	Op      string
	Path    string
	Message string
	Hint    string
	Err     error
}

func (e *Error) Error() string {
	s := ""
	if e.Op != "" {
		s = e.Op + ": "
	}
	if e.Path != "" {
		s += e.Path + ": "
	}
	s += e.Message
	if e.Err != nil {
		if e.Message != "" {
			s += ": "
		}
		s += e.Err.Error()
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of the first *Error in err's chain, EINTERNAL
// for any other non-nil error and "" for nil.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) && e.Code != "" {
		return e.Code
	}
	return EINTERNAL
}

// ErrorHint returns the hint of the first *Error in err's chain that has one.
func ErrorHint(err error) string {
	for err != nil {
		var e *Error
		if !errors.As(err, &e) {
			return ""
		}
		if e.Hint != "" {
			return e.Hint
		}
		err = e.Err
	}
	return ""
}

// StoreError is a store failure that ends a check: the store's own *Error
// as it is (it names the store and what to try), anything else as
// EINTERNAL, saying which step of the check failed (op: "read the
// replay cache").
func StoreError(op string, err error) error {
	if _, ok := errors.AsType[*Error](err); ok {
		return err
	}
	return &Error{Code: EINTERNAL, Op: "check", Message: "cannot " + op, Err: err}
}

// Interrupted is the error of a check that ctx ended (a signal, the
// check's deadline): EINTERNAL "interrupted", with ctx's cause.
func Interrupted(ctx context.Context) error {
	return &Error{Code: EINTERNAL, Op: "check", Message: "interrupted", Err: context.Cause(ctx)}
}
