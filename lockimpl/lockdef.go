package lockimpl

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
	"go.yaml.in/yaml/v3"
)

// DefPrefix starts the --lock name of a lock defined by its Redis scripts
// in a YAML file (--lock-def FILE is --lock def:FILE): the name carries the
// file, so every place that passes a lock by name passes the definition.
const DefPrefix = "def:"

// IsDef reports whether lock is a definition lock (def:FILE).
func IsDef(lock string) bool { return strings.HasPrefix(lock, DefPrefix) }

// DefFile is the file a definition lock's name carries.
func DefFile(lock string) string { return strings.TrimPrefix(lock, DefPrefix) }

// The templates a definition's keys, arguments and commands may use.
const (
	tmplKey = iota
	tmplToken
	tmplTTLms
	tmplTTLs
	tmplFenceKey
)

// templateNames are the {name}s a template may hold, by their index above.
func templateNames() []string { return []string{"key", "token", "ttl_ms", "ttl_s", "fence_key"} }

// numTemplates is len(templateNames()).
const numTemplates = tmplFenceKey + 1

// acceptedTemplates lists templateNames as an error message gives them.
func acceptedTemplates() string {
	names := templateNames()
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = "{" + n + "}"
	}
	return strings.Join(out, ", ") + " ({{ and }} for literal braces)"
}

// tmplPart is a literal (v < 0) or one template variable.
type tmplPart struct {
	lit string
	v   int
}

// template is one key or argument, compiled once at parse time.
type template []tmplPart

// parseTemplate compiles s; {{ and }} are literal braces.
func parseTemplate(s string) (template, error) {
	var t template
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			t = append(t, tmplPart{lit: lit.String(), v: -1})
			lit.Reset()
		}
	}
	for i := 0; i < len(s); i++ {
		switch {
		case strings.HasPrefix(s[i:], "{{"), strings.HasPrefix(s[i:], "}}"):
			lit.WriteByte(s[i])
			i++
		case s[i] == '{':
			end := strings.IndexByte(s[i:], '}')
			if end < 0 {
				return nil, fmt.Errorf("%q: unclosed {", s)
			}
			name := s[i+1 : i+end]
			v := slices.Index(templateNames(), name)
			if v < 0 {
				return nil, fmt.Errorf("unknown template {%s}; accepted: %s", name, acceptedTemplates())
			}
			flush()
			t = append(t, tmplPart{v: v})
			i += end
		case s[i] == '}':
			return nil, fmt.Errorf("%q: } without {", s)
		default:
			lit.WriteByte(s[i])
		}
	}
	flush()
	return t, nil
}

// tmplValues are the values of one call's templates.
type tmplValues [numTemplates]string

// expand is t with vals put in; a template of one part is no copy.
func (t template) expand(vals *tmplValues) string {
	if len(t) == 1 {
		if t[0].v < 0 {
			return t[0].lit
		}
		return vals[t[0].v]
	}
	var b strings.Builder
	for _, p := range t {
		if p.v < 0 {
			b.WriteString(p.lit)
		} else {
			b.WriteString(vals[p.v])
		}
	}
	return b.String()
}

// matcher reads one kind of reply: OK (a status), nil, an integer, any
// positive integer or any integer.
type matcher struct {
	kind int
	n    int64
}

const (
	matchNone = iota
	matchOK
	matchNil
	matchInt
	matchPositive
	matchInteger
)

// acceptedMatchers is what a reply rule may say.
const acceptedMatchers = "OK, nil, an integer (1, 0, -1, …), positive, integer"

// parseMatcher reads a reply rule; "" is no rule.
func parseMatcher(s string) (matcher, error) {
	switch s {
	case "":
		return matcher{}, nil
	case "OK":
		return matcher{kind: matchOK}, nil
	case "nil":
		return matcher{kind: matchNil}, nil
	case "positive":
		return matcher{kind: matchPositive}, nil
	case "integer":
		return matcher{kind: matchInteger}, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return matcher{}, fmt.Errorf("%q: accepted: %s", s, acceptedMatchers)
	}
	return matcher{kind: matchInt, n: n}, nil
}

// match reports whether a reply is of the matcher's kind. A reply read
// through go-redis is first made a rawReply (replyOf), so both paths are
// read by these rules alone.
func (m matcher) match(rep rawReply) bool {
	isInt := rep.kind == ':'
	switch m.kind {
	case matchOK:
		return rep.ok
	case matchNil:
		return rep.isNil
	case matchInt:
		return isInt && rep.n == m.n
	case matchPositive:
		return isInt && rep.n > 0
	case matchInteger:
		return isInt
	}
	return false
}

// defOp is one operation of a definition: a Lua script (EVALSHA, EVAL on
// NOSCRIPT) with its keys and arguments, or a single command.
type defOp struct {
	script  *redis.Script
	command []template
	keys    []template
	args    []template
	// ok is the reply of success (granted, released, renewed); held the
	// acquire's reply when another holds the key; lost and taken the
	// release's or renew's when the lease is gone or another's.
	ok, held, lost, taken matcher
	// fence and validity read the successful reply as the fencing token
	// and as the remaining validity in ms.
	fence, validity bool
	// wire is the command encoded once for the raw path.
	wire *defWire
	// secs is true when a template holds {ttl_s}, which a call then formats.
	secs bool
}

// LockDef is a parsed lock definition.
type LockDef struct {
	// Name is the lock's own name in the file, for reports.
	Name string
	// File is the file it came from.
	File string

	acquire, release defOp
	renew            *defOp
	// quorum is true when the file asks for a majority of N masters
	// (quorum: majority): the lock then runs on redlock:N only.
	quorum bool
	// driver, when set, is the --lock name (exec:CMD) of the driver the
	// file names instead of scripts: plan runs that driver lock.
	driver string
}

// Driver is the driver lock (exec:CMD) a file with driver: stands for, ""
// for a file of scripts.
func (d *LockDef) Driver() string { return d.driver }

// Quorum reports whether the definition acquires on a majority of masters.
func (d *LockDef) Quorum() bool { return d.quorum }

// quorumMajority is the one value the quorum field accepts.
const quorumMajority = "majority"

// Renews reports whether the definition has a renew operation.
func (d *LockDef) Renews() bool { return d.renew != nil }

// Fences reports whether the acquire's reply is a fencing token.
func (d *LockDef) Fences() bool { return d.acquire.fence }

// The YAML shapes, decoded with unknown fields refused.
type defFile struct {
	Name    string  `yaml:"name"`
	Quorum  string  `yaml:"quorum"`
	Driver  string  `yaml:"driver"`
	Acquire *opFile `yaml:"acquire"`
	Release *opFile `yaml:"release"`
	Renew   *opFile `yaml:"renew"`
}

type opFile struct {
	Lua     string    `yaml:"lua"`
	Command []string  `yaml:"command"`
	Keys    []string  `yaml:"keys"`
	Args    []string  `yaml:"args"`
	Reply   replyFile `yaml:"reply"`
}

type replyFile struct {
	Granted  string `yaml:"granted"`
	Held     string `yaml:"held"`
	OK       string `yaml:"ok"`
	Lost     string `yaml:"lost"`
	Taken    string `yaml:"taken"`
	Fence    string `yaml:"fence"`
	Validity string `yaml:"validity"`
}

// acceptedFields names the fields of each level, for the unknown-field error.
func acceptedFields(typ string) string {
	switch typ {
	case "defFile":
		return "name, quorum, driver, acquire, release, renew"
	case "opFile":
		return "lua, command, keys, args, reply"
	}
	return "granted, held, ok, lost, taken, fence, validity"
}

// LoadLockDef reads and parses a definition file. Every error is one line
// naming the file.
func LoadLockDef(path string) (*LockDef, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("lock definition %s: %w", path, err)
	}
	d, err := ParseLockDef(b)
	if err != nil {
		return nil, fmt.Errorf("lock definition %s: %w", path, err)
	}
	d.File = path
	return d, nil
}

// ParseLockDef parses a definition. Its errors are one line each.
func ParseLockDef(b []byte) (*LockDef, error) {
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	var f defFile
	if err := dec.Decode(&f); err != nil {
		return nil, oneLineYAMLError(err)
	}
	d := &LockDef{Name: f.Name}
	if d.Name == "" {
		d.Name = "unnamed"
	}
	if f.Driver != "" {
		return parseDriverDef(d, &f)
	}
	switch f.Quorum {
	case "":
	case quorumMajority:
		d.quorum = true
	default:
		return nil, fmt.Errorf("quorum: %q: accepted: %s (acquire on a majority of redlock:N's masters), or no quorum field for one master", f.Quorum, quorumMajority)
	}
	var err error
	if f.Acquire == nil {
		return nil, errors.New("no acquire: a definition needs acquire and release")
	}
	if f.Release == nil {
		return nil, errors.New("no release: a definition needs acquire and release")
	}
	if d.acquire, err = compileOp("acquire", f.Acquire); err != nil {
		return nil, err
	}
	if d.release, err = compileOp("release", f.Release); err != nil {
		return nil, err
	}
	if f.Renew != nil {
		op, err := compileOp("renew", f.Renew)
		if err != nil {
			return nil, err
		}
		d.renew = &op
	}
	return d, nil
}

// parseDriverDef reads a file naming a driver (driver: CMD ARGS): it holds
// no scripts and no quorum, and its command parses as --lock exec:'CMD'.
func parseDriverDef(d *LockDef, f *defFile) (*LockDef, error) {
	if f.Acquire != nil || f.Release != nil || f.Renew != nil || f.Quorum != "" {
		return nil, errors.New("driver: a definition naming a driver has no acquire, release, renew or quorum (its hello says what it does); give a driver or scripts")
	}
	if _, err := ParseDriverCommand(DriverPrefix + f.Driver); err != nil {
		return nil, fmt.Errorf("driver: %w", err)
	}
	d.driver = DriverPrefix + f.Driver
	return d, nil
}

// oneLineYAMLError turns yaml's errors (an unknown field's is several
// lines, naming Go types) into one line naming the accepted fields.
func oneLineYAMLError(err error) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) || len(te.Errors) == 0 {
		return fmt.Errorf("not YAML: %s", strings.ReplaceAll(strings.TrimPrefix(err.Error(), "yaml: "), "\n", "; "))
	}
	msg := te.Errors[0]
	if before, typ, ok := strings.Cut(msg, " not found in type lockimpl."); ok {
		return fmt.Errorf("%s: unknown; accepted: %s", before, acceptedFields(typ))
	}
	return errors.New(msg)
}

// opFields says which reply rules each operation reads.
func opFields(op string) []string {
	switch op {
	case "acquire":
		return []string{"granted", "held", "fence", "validity"}
	case "release":
		return []string{"ok", "lost", "taken"}
	}
	return []string{"ok", "lost", "taken", "validity"}
}

// compileOp checks and compiles one operation.
func compileOp(name string, f *opFile) (defOp, error) {
	var op defOp
	switch {
	case f.Lua == "" && len(f.Command) == 0:
		return op, fmt.Errorf("%s: no script: give lua (with keys and args) or command", name)
	case f.Lua != "" && len(f.Command) > 0:
		return op, fmt.Errorf("%s: both lua and command; give one", name)
	case len(f.Command) > 0 && (len(f.Keys) > 0 || len(f.Args) > 0):
		return op, fmt.Errorf("%s: keys and args go with lua; a command holds its own", name)
	}
	var err error
	if op.command, err = compileTemplates(name+".command", f.Command); err != nil {
		return op, err
	}
	if op.keys, err = compileTemplates(name+".keys", f.Keys); err != nil {
		return op, err
	}
	if op.args, err = compileTemplates(name+".args", f.Args); err != nil {
		return op, err
	}
	if f.Lua != "" {
		op.script = redis.NewScript(f.Lua)
	}
	if err := compileReply(name, f.Reply, &op); err != nil {
		return op, err
	}
	op.wire = newDefWire(&op, f.Lua)
	op.secs = usesVar(tmplTTLs, op.command, op.keys, op.args)
	return op, nil
}

// usesVar reports whether any template of lists holds variable v.
func usesVar(v int, lists ...[]template) bool {
	for _, l := range lists {
		for _, t := range l {
			for _, p := range t {
				if p.v == v {
					return true
				}
			}
		}
	}
	return false
}

// compileTemplates compiles a list, naming the item that failed.
func compileTemplates(what string, in []string) ([]template, error) {
	out := make([]template, len(in))
	for i, s := range in {
		t, err := parseTemplate(s)
		if err != nil {
			return nil, fmt.Errorf("%s[%d]: %w", what, i, err)
		}
		out[i] = t
	}
	return out, nil
}

// compileReply reads an operation's reply rules: those it does not read
// are refused, and success and its counterpart are required.
func compileReply(name string, r replyFile, op *defOp) error {
	given := map[string]string{"granted": r.Granted, "held": r.Held, "ok": r.OK, "lost": r.Lost, "taken": r.Taken,
		"fence": r.Fence, "validity": r.Validity}
	allowed := opFields(name)
	for _, k := range []string{"granted", "held", "ok", "lost", "taken", "fence", "validity"} {
		if given[k] != "" && !slices.Contains(allowed, k) {
			return fmt.Errorf("%s.reply.%s: not read on %s; accepted: %s", name, k, name, strings.Join(allowed, ", "))
		}
	}
	success, other := "ok", "lost"
	if name == "acquire" {
		success, other = "granted", "held"
	}
	if given[success] == "" || given[other] == "" {
		return fmt.Errorf("%s.reply: needs %s and %s (%s)", name, success, other, acceptedMatchers)
	}
	for _, m := range []struct {
		key string
		dst *matcher
	}{{"granted", &op.ok}, {"ok", &op.ok}, {"held", &op.held}, {"lost", &op.lost}, {"taken", &op.taken}} {
		if given[m.key] == "" {
			continue
		}
		v, err := parseMatcher(given[m.key])
		if err != nil {
			return fmt.Errorf("%s.reply.%s: %w", name, m.key, err)
		}
		*m.dst = v
	}
	var err error
	if op.fence, err = fromReply(name, "fence", r.Fence, "reply", op.ok); err != nil {
		return err
	}
	op.validity, err = fromReply(name, "validity", r.Validity, "reply-ms", op.ok)
	return err
}

// fromReply reads a rule that takes a figure from the successful reply:
// only word is accepted, and only where success is an integer.
func fromReply(op, field, v, word string, ok matcher) (bool, error) {
	switch {
	case v == "":
		return false, nil
	case v != word:
		return false, fmt.Errorf("%s.reply.%s: %q: accepted: %s (the %s reply's integer)", op, field, v, word, op)
	case ok.kind != matchPositive && ok.kind != matchInteger:
		return false, fmt.Errorf("%s.reply.%s: needs a success reply of positive or integer, not one fixed value", op, field)
	}
	return true, nil
}
