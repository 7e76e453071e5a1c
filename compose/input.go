package compose

import (
	"errors"
	"fmt"
)

// InputError is a request a topology cannot meet as given: URLs that do not
// match the topology, or a setting the provider cannot apply. It is bad input
// (exit code 2) though some of it is only found when the topology comes up
// (a cluster behind a --redis URL with another number of masters).
type InputError struct{ Msg string }

// Error is the message, naming the flag where there is one.
func (e *InputError) Error() string { return e.Msg }

// badRequest builds an InputError.
func badRequest(format string, args ...any) error {
	return &InputError{Msg: fmt.Sprintf(format, args...)}
}

// IsInputError reports whether err is, or wraps, an InputError.
func IsInputError(err error) bool {
	var ie *InputError
	return errors.As(err, &ie)
}
