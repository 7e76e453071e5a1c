package lockimpl

import (
	"context"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// A definition's commands on the raw path. Each operation's command is
// encoded in RESP once, when the definition is loaded: its name, script
// hash, key count and every argument without a template are bytes ready to
// write, and only the arguments holding templates ({key}, {token}, …) are
// encoded per call, straight into the connection's write buffer. A call
// then costs what the built-in single's raw path costs: one write and one
// read, with no command object, argument slice or expanded strings.

// wirePart is one piece of an encoded command: RESP bytes as they are
// (lit), or one argument holding templates, encoded per call (arg).
type wirePart struct {
	lit []byte
	arg template
}

// defWire is one operation's command, encoded once.
type defWire struct {
	// head is the array header and, for a script, EVALSHA, its hash and
	// its key count; evalHead the same with EVAL and the source, for the
	// resend after NOSCRIPT (nil for a single command).
	head, evalHead []byte
	parts          []wirePart
	// name is the command's name as INFO commandstats writes it.
	name string
}

// wireVals are one call's template values as the wire writes them:
// {fence_key} is written as key and suffix, never built.
type wireVals struct {
	key, token, ttlMS, ttlS string
}

// len is the length of template variable v's value.
func (w *wireVals) len(v int) int {
	switch v {
	case tmplKey:
		return len(w.key)
	case tmplToken:
		return len(w.token)
	case tmplTTLms:
		return len(w.ttlMS)
	case tmplTTLs:
		return len(w.ttlS)
	}
	return len(w.key) + len(fenceSuffix)
}

// append writes template variable v's value.
func (w *wireVals) append(buf []byte, v int) []byte {
	switch v {
	case tmplKey:
		return append(buf, w.key...)
	case tmplToken:
		return append(buf, w.token...)
	case tmplTTLms:
		return append(buf, w.ttlMS...)
	case tmplTTLs:
		return append(buf, w.ttlS...)
	}
	return append(append(buf, w.key...), fenceSuffix...)
}

// values are the templates as strings, for go-redis's path.
func (w *wireVals) values() tmplValues {
	return tmplValues{tmplKey: w.key, tmplToken: w.token, tmplTTLms: w.ttlMS, tmplTTLs: w.ttlS, tmplFenceKey: FenceKey(w.key)}
}

// newDefWire encodes op once.
func newDefWire(op *defOp, src string) *defWire {
	w := &defWire{}
	var argv []template
	if op.script != nil {
		n := 3 + len(op.keys) + len(op.args)
		w.head = appendArrayHeader(nil, n)
		w.head = appendBulk(w.head, "EVALSHA")
		w.head = appendBulk(w.head, op.script.Hash())
		w.evalHead = appendArrayHeader(nil, n)
		w.evalHead = appendBulk(w.evalHead, "EVAL")
		w.evalHead = appendBulk(w.evalHead, src)
		count := strconv.Itoa(len(op.keys))
		w.head = appendBulk(w.head, count)
		w.evalHead = appendBulk(w.evalHead, count)
		w.name = "evalsha"
		argv = append(append(argv, op.keys...), op.args...)
	} else {
		w.head = appendArrayHeader(nil, len(op.command))
		w.name = strings.ToLower(commandName(op.command[0]))
		argv = op.command
	}
	for _, t := range argv {
		if lit, ok := t.literal(); ok {
			// Literals next to each other are one write of bytes.
			if k := len(w.parts) - 1; k >= 0 && w.parts[k].arg == nil {
				w.parts[k].lit = appendBulk(w.parts[k].lit, lit)
				continue
			}
			w.parts = append(w.parts, wirePart{lit: appendBulk(nil, lit)})
			continue
		}
		w.parts = append(w.parts, wirePart{arg: t})
	}
	return w
}

// commandName is a command's name for the counters: its first word as
// written, its templates left as they are.
func commandName(t template) string {
	var b strings.Builder
	for _, p := range t {
		if p.v < 0 {
			b.WriteString(p.lit)
		} else {
			b.WriteString("{" + templateNames()[p.v] + "}")
		}
	}
	return b.String()
}

// literal is t's text when it holds no template variable.
func (t template) literal() (string, bool) {
	switch {
	case len(t) == 0:
		return "", true
	case len(t) == 1 && t[0].v < 0:
		return t[0].lit, true
	}
	return "", false
}

// encode appends the command with vals, by EVAL and the source when eval
// is set.
func (w *defWire) encode(buf []byte, vals *wireVals, eval bool) []byte {
	if eval {
		buf = append(buf, w.evalHead...)
	} else {
		buf = append(buf, w.head...)
	}
	for i := range w.parts {
		p := &w.parts[i]
		if p.arg == nil {
			buf = append(buf, p.lit...)
			continue
		}
		n := 0
		for _, tp := range p.arg {
			if tp.v < 0 {
				n += len(tp.lit)
			} else {
				n += vals.len(tp.v)
			}
		}
		buf = append(buf, '$')
		buf = strconv.AppendInt(buf, int64(n), 10)
		buf = append(buf, '\r', '\n')
		for _, tp := range p.arg {
			if tp.v < 0 {
				buf = append(buf, tp.lit...)
			} else {
				buf = vals.append(buf, tp.v)
			}
		}
		buf = append(buf, '\r', '\n')
	}
	return buf
}

// appendArrayHeader appends a RESP array header of n elements.
func appendArrayHeader(buf []byte, n int) []byte {
	buf = append(buf, '*')
	buf = strconv.AppendInt(buf, int64(n), 10)
	return append(buf, '\r', '\n')
}

// appendBulk appends s as a RESP bulk string.
func appendBulk(buf []byte, s string) []byte {
	buf = append(buf, '$')
	buf = strconv.AppendInt(buf, int64(len(s)), 10)
	buf = append(buf, '\r', '\n')
	buf = append(buf, s...)
	return append(buf, '\r', '\n')
}

// doWire sends w with vals on the raw path and reads its reply, resending
// a script by EVAL after NOSCRIPT on the same connection; ok is false when
// no connection was idle and nothing was sent (as do's).
func (o *rawOne) doWire(ctx context.Context, w *defWire, vals *wireVals) (rep rawReply, err error, ok bool) {
	c := o.begin(ctx)
	if c == nil {
		return rawReply{}, nil, false
	}
	rep, err = o.sendWire(c, w, vals, false)
	if err != nil && w.evalHead != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
		rep, err = o.sendWire(c, w, vals, true)
	}
	o.end(c, err)
	return rep, err, true
}

// sendWire writes w (by EVAL when eval is set) on c and reads its reply.
func (o *rawOne) sendWire(c *rawConn, w *defWire, vals *wireVals, eval bool) (rawReply, error) {
	c.buf = w.encode(c.buf[:0], vals, eval)
	if _, err := c.conn.Write(c.buf); err != nil {
		return rawReply{}, err
	}
	if eval {
		o.sent.sentAlone("eval")
	} else {
		o.sent.sentAlone(w.name)
	}
	return c.read()
}

// replyOf is a go-redis reply (Cmd.Result's value, nil for a nil reply)
// as the raw reader gives it, so both paths are read by the same rules.
func replyOf(val any) rawReply {
	switch v := val.(type) {
	case nil:
		return rawReply{kind: '$', isNil: true}
	case int64:
		return rawReply{kind: ':', n: v}
	case string:
		return rawReply{kind: '$', ok: v == "OK"}
	}
	return rawReply{kind: '*'}
}
