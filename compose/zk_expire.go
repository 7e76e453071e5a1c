package compose

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sort"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/lockbench/lockbench/lockimpl"
)

// zkServerSecret is the constant ZooKeeperServer mixes into a session id
// to derive the session's password (generatePasswd: new
// java.util.Random(id ^ superSecret).nextBytes(16 bytes)). Knowing it is
// how ZooKeeper's and Curator's own tests (KillSession) end another
// client's session: reconnect as that session, then close it.
const zkServerSecret = 0xB3415C00

// zkCloseSessionOp is the closeSession request's opcode, -11, as the
// unsigned word it is written as.
const zkCloseSessionOp uint32 = 1<<32 - 11

// zkExpireTimeout bounds the whole fault: finding a holder and closing its
// session.
const zkExpireTimeout = 10 * time.Second

// expireZkHolder ends the session of one lock holder: the holder of the
// first key (in name order) whose queue has a node. The ensemble deletes
// the session's ephemeral nodes at once, so the key's next waiter is
// granted, while the holder's client learns of it only when it next talks
// to the ensemble: Curator #727's two holders. It returns the session id.
func (t *Topology) expireZkHolder(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, zkExpireTimeout)
	defer cancel()
	addrs := t.Addrs()
	session, err := findZkHolder(ctx, addrs)
	if err != nil {
		return "", fmt.Errorf("expire holder: %w", err)
	}
	var errs []error
	for _, a := range addrs {
		err := closeZkSession(ctx, a, session)
		if err == nil || closedEarlier(errs, err) {
			return fmt.Sprintf("0x%x", session), nil
		}
		errs = append(errs, err)
	}
	return "", fmt.Errorf("expire holder: session 0x%x: %w", session, errors.Join(errs...))
}

// findZkHolder reads the lock's key nodes (lockimpl.DefaultZkRoot) and
// returns the session that owns the first node of the first key that has
// one: that session holds the key.
func findZkHolder(ctx context.Context, addrs []string) (int64, error) {
	conn, events, err := zk.Connect(addrs, 5*time.Second, zk.WithLogInfo(false), zk.WithLogger(quietZkLog{}))
	if err != nil {
		return 0, fmt.Errorf("connect: %w", err)
	}
	defer conn.Close()
	go func() {
		for range events { // drained until Close closes it
		}
	}()
	type result struct {
		id  int64
		err error
	}
	done := make(chan result, 1)
	go func() {
		id, err := firstZkHolder(conn)
		done <- result{id, err}
	}()
	select {
	case r := <-done:
		return r.id, r.err
	case <-ctx.Done():
		return 0, fmt.Errorf("no answer from %s: %w", strings.Join(addrs, ","), ctx.Err())
	}
}

// firstZkHolder walks the keys under the lock's root in name order.
func firstZkHolder(conn *zk.Conn) (int64, error) {
	root := lockimpl.DefaultZkRoot
	keys, _, err := conn.Children(root)
	if errors.Is(err, zk.ErrNoNode) {
		return 0, errors.New("no lock holder to expire (no key nodes yet)")
	}
	if err != nil {
		return 0, fmt.Errorf("list %s: %w", root, err)
	}
	sort.Strings(keys)
	for _, k := range keys {
		kids, _, err := conn.Children(root + "/" + k)
		if err != nil || len(kids) == 0 {
			continue // released meanwhile
		}
		// Sequence numbers are the last ten digits of a sequential node's name.
		sort.Slice(kids, func(i, j int) bool { return zkSeq(kids[i]) < zkSeq(kids[j]) })
		_, st, err := conn.Get(root + "/" + k + "/" + kids[0])
		if err != nil || st.EphemeralOwner == 0 {
			continue
		}
		return st.EphemeralOwner, nil
	}
	return 0, errors.New("no lock holder to expire (every key's queue is empty)")
}

// zkSeq is the sequence suffix of a sequential node's name.
func zkSeq(name string) string {
	if len(name) < 10 {
		return name
	}
	return name[len(name)-10:]
}

// quietZkLog drops go-zookeeper's log lines, which would interleave with
// the run's output.
type quietZkLog struct{}

func (quietZkLog) Printf(string, ...any) {}

// zkSessionPassword is the password ZooKeeperServer gave session id.
func zkSessionPassword(id int64) []byte {
	r := newJavaRandom(id ^ zkServerSecret)
	return r.nextBytes(16)
}

// javaRandom is java.util.Random's generator, as far as nextBytes needs it.
type javaRandom struct{ seed int64 }

const (
	javaRandomMultiplier = 0x5DEECE66D
	javaRandomMask       = (1 << 48) - 1
)

func newJavaRandom(seed int64) *javaRandom {
	return &javaRandom{seed: (seed ^ javaRandomMultiplier) & javaRandomMask}
}

func (r *javaRandom) nextInt() int32 {
	r.seed = (r.seed*javaRandomMultiplier + 0xB) & javaRandomMask
	return int32(r.seed >> 16)
}

// nextBytes fills n bytes four at a time from nextInt, low byte first.
func (r *javaRandom) nextBytes(n int) []byte {
	out := make([]byte, 0, n)
	for len(out) < n {
		v := r.nextInt()
		for k := 0; k < 4 && len(out) < n; k++ {
			out = append(out, byte(v))
			v >>= 8
		}
	}
	return out
}

// closeZkSession connects to the member at addr as session id (with its
// password) and closes it. The ensemble answers a reconnect to a session
// that already ended with a zero timeout.
func closeZkSession(ctx context.Context, addr string, id int64) error {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("dial %s: %w", addr, err)
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	}
	pw := zkSessionPassword(id)
	req := binary.BigEndian.AppendUint32(nil, 0) // protocol version
	req = binary.BigEndian.AppendUint64(req, 0)  // last zxid seen: none, any member takes it
	req = binary.BigEndian.AppendUint32(req, 30000)
	req = binary.BigEndian.AppendUint64(req, uint64(id))
	req = binary.BigEndian.AppendUint32(req, uint32(len(pw)))
	req = append(req, pw...)
	req = append(req, 0) // not read-only
	if err := writeZkFrame(c, req); err != nil {
		return fmt.Errorf("%s: connect as session 0x%x: %w", addr, id, err)
	}
	br := bufio.NewReader(c)
	resp, err := readZkFrame(br)
	if err != nil {
		return fmt.Errorf("%s: connect as session 0x%x: %w", addr, id, err)
	}
	if len(resp) < 16 {
		return fmt.Errorf("%s: connect answer of %d bytes", addr, len(resp))
	}
	if timeout := int32(binary.BigEndian.Uint32(resp[4:8])); timeout <= 0 {
		return fmt.Errorf("%s: session 0x%x %w", addr, id, errZkSessionGone)
	}
	closeReq := binary.BigEndian.AppendUint32(nil, 1) // xid
	closeReq = binary.BigEndian.AppendUint32(closeReq, zkCloseSessionOp)
	if err := writeZkFrame(c, closeReq); err != nil {
		return fmt.Errorf("%s: close session 0x%x: %w", addr, id, err)
	}
	ans, err := readZkFrame(br)
	if err != nil {
		return fmt.Errorf("%s: close session 0x%x: %w: %w", addr, id, errZkCloseUnanswered, err)
	}
	if len(ans) < 16 {
		return fmt.Errorf("%s: close session answer of %d bytes", addr, len(ans))
	}
	if code := int32(binary.BigEndian.Uint32(ans[12:16])); code != 0 {
		return fmt.Errorf("%s: close session 0x%x: error code %d", addr, id, code)
	}
	return nil
}

// The ways a close of a session through one member can fail that tell
// whether it was ended.
var (
	// errZkSessionGone: the member said the session had already ended.
	errZkSessionGone = errors.New("had already ended")
	// errZkCloseUnanswered: the close was sent and no answer came (the
	// member may close the connection with the session before its reply).
	errZkCloseUnanswered = errors.New("no answer to close session")
)

// closedEarlier reports whether err, a member's answer that the session
// had already ended, comes after a close sent through an earlier member
// that went unanswered (earlier): that close did end it. Counting it as
// failed would record the fault as not applied, and its trial as one that
// could not have failed.
func closedEarlier(earlier []error, err error) bool {
	if !errors.Is(err, errZkSessionGone) {
		return false
	}
	for _, e := range earlier {
		if errors.Is(e, errZkCloseUnanswered) {
			return true
		}
	}
	return false
}

// writeZkFrame writes one length-prefixed packet.
func writeZkFrame(w io.Writer, body []byte) error {
	_, err := w.Write(append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...))
	return err
}

// readZkFrame reads one length-prefixed packet (at most 1 MiB).
func readZkFrame(r io.Reader) ([]byte, error) {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return nil, err
	}
	size := binary.BigEndian.Uint32(n[:])
	if size > 1<<20 {
		return nil, fmt.Errorf("packet of %d bytes", size)
	}
	body := make([]byte, size)
	_, err := io.ReadFull(r, body)
	return body, err
}
