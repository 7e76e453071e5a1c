package lockimpl

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
)

// The driver protocol, version 1: JSON lines over a driver process's stdin
// (lockbench's requests) and stdout (the driver's answers). lockbench
// writes a hello with the servers, the driver answers with its own hello
// naming its capabilities, then every request carries an id the answer
// repeats. The README's "Bring your own lock" section documents it; these
// types are its one definition (the Go drivers serve it through ServeDriver).

// DriverProtocol is the protocol version lockbench speaks.
const DriverProtocol = 1

// Driver request operations.
const (
	// OpHello opens the conversation, in both directions.
	OpHello = "hello"
	// OpAcquire asks for one attempt at a key.
	OpAcquire = "acquire"
	// OpRenew extends a lease the driver granted.
	OpRenew = "renew"
	// OpRelease gives a lease up.
	OpRelease = "release"
)

// Driver answers' results.
const (
	// ResultGranted: the request did what it asked (acquired, renewed,
	// released).
	ResultGranted = "granted"
	// ResultHeld: another owner holds the key (acquire: contended; renew
	// or release: the key now holds another owner's token).
	ResultHeld = "held"
	// ResultLost: the lease is gone (renew, release).
	ResultLost = "lost"
	// ResultError: the driver could not decide (network, timeout): the
	// attempt failed, and Message says why.
	ResultError = "error"
)

// DriverHello is lockbench's first line to a driver: the protocol version
// and the servers of the run's topology, as redis:// URLs (with the
// password, if any: the line goes only to the driver's stdin).
type DriverHello struct {
	Op      string   `json:"op"`
	V       int      `json:"v"`
	Servers []string `json:"servers"`
}

// DriverCaps is the driver's hello: who it is and what its lock can do.
type DriverCaps struct {
	Op string `json:"op"`
	V  int    `json:"v"`
	// Name names the lock (its library), for the result.
	Name string `json:"name"`
	// Version is the library's version, "" when unknown.
	Version string `json:"version,omitempty"`
	// Renews is true when the driver answers renew requests.
	Renews bool `json:"renews"`
	// Fences is true when granted answers carry a fencing token.
	Fences bool `json:"fences"`
	// Waits is true when an acquire waits on the server for the key (a
	// blocking lock) instead of answering held at once.
	Waits bool `json:"waits"`
	// Concurrent is true when the driver serves many requests at once
	// (answers may come out of order): --driver-procs auto then shares one
	// process among the workers.
	Concurrent bool `json:"concurrent,omitempty"`
}

// DriverRequest is one request after the hello.
type DriverRequest struct {
	ID    uint64 `json:"id"`
	Op    string `json:"op"`
	Key   string `json:"key"`
	Token string `json:"token,omitempty"`
	TTLms int64  `json:"ttl_ms,omitempty"`
}

// DriverAnswer is the driver's answer to one request.
type DriverAnswer struct {
	ID     uint64 `json:"id"`
	Result string `json:"result"`
	// Token is the owner token of a granted acquisition.
	Token string `json:"token,omitempty"`
	// Fence is the fencing token, 0 for none.
	Fence int64 `json:"fence,omitempty"`
	// ValidityMs is how long after the request the lease is valid; 0
	// means the TTL asked.
	ValidityMs int64 `json:"validity_ms,omitempty"`
	// Message says why, for an error.
	Message string `json:"message,omitempty"`
}

// maxDriverLine bounds one line of the protocol: a longer one is a broken
// driver, not a lease.
const maxDriverLine = 64 << 10

// decodeStrict decodes one JSON object from line, refusing unknown fields
// and anything after it, so a typo in a driver is an error, not a silent
// default.
func decodeStrict(line []byte, v any) error {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' {
		return errors.New("not a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("not the protocol's JSON: %w", err)
	}
	if dec.More() {
		return errors.New("more than one JSON value on the line")
	}
	return nil
}

// ParseDriverCaps reads a driver's hello line.
func ParseDriverCaps(line []byte) (DriverCaps, error) {
	var c DriverCaps
	if err := decodeStrict(line, &c); err != nil {
		return DriverCaps{}, err
	}
	switch {
	case c.Op != OpHello:
		return DriverCaps{}, fmt.Errorf("first line must be {\"op\":\"hello\",...}, got op %q", c.Op)
	case c.V != DriverProtocol:
		return DriverCaps{}, fmt.Errorf("protocol version %d; lockbench speaks %d", c.V, DriverProtocol)
	case c.Name == "":
		return DriverCaps{}, errors.New("hello without a name")
	}
	return c, nil
}

// ParseDriverAnswer reads one answer line: a known result, an id, and the
// fields its result allows (a token only with granted, a message only
// with error). Whether the id was asked, and whether a grant needs a token
// (an acquire's does), is the caller's to check.
func ParseDriverAnswer(line []byte) (DriverAnswer, error) {
	var a DriverAnswer
	if err := decodeStrict(line, &a); err != nil {
		return DriverAnswer{}, err
	}
	switch {
	case a.ID == 0:
		return DriverAnswer{}, errors.New("answer without an id (ids start at 1)")
	case !slices.Contains([]string{ResultGranted, ResultHeld, ResultLost, ResultError}, a.Result):
		return DriverAnswer{}, fmt.Errorf("answer %d: result %q; accepted: granted, held, lost, error", a.ID, a.Result)
	case a.Result != ResultGranted && (a.Token != "" || a.Fence != 0 || a.ValidityMs != 0):
		return DriverAnswer{}, fmt.Errorf("answer %d: %s with a token, fence or validity (only granted has them)", a.ID, a.Result)
	case a.ValidityMs < 0 || a.Fence < 0:
		return DriverAnswer{}, fmt.Errorf("answer %d: negative validity or fence", a.ID)
	case a.Result == ResultError && a.Message == "":
		return DriverAnswer{}, fmt.Errorf("answer %d: error without a message", a.ID)
	}
	return a, nil
}

// ParseDriverRequest reads one request line, for drivers written in Go
// (ServeDriver).
func ParseDriverRequest(line []byte) (DriverRequest, error) {
	var r DriverRequest
	if err := decodeStrict(line, &r); err != nil {
		return DriverRequest{}, err
	}
	switch {
	case r.ID == 0:
		return DriverRequest{}, errors.New("request without an id")
	case r.Key == "":
		return DriverRequest{}, fmt.Errorf("request %d without a key", r.ID)
	case r.Op == OpAcquire || r.Op == OpRenew:
		if r.TTLms <= 0 {
			return DriverRequest{}, fmt.Errorf("request %d: %s needs ttl_ms > 0", r.ID, r.Op)
		}
	case r.Op != OpRelease:
		return DriverRequest{}, fmt.Errorf("request %d: op %q; accepted: acquire, renew, release", r.ID, r.Op)
	}
	if r.Op != OpAcquire && r.Token == "" {
		return DriverRequest{}, fmt.Errorf("request %d: %s needs the lease's token", r.ID, r.Op)
	}
	return r, nil
}
