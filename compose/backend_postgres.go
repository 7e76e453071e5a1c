package compose

import (
	"context"
	"fmt"
	"time"

	"github.com/lockbench/lockbench/lockimpl"
)

// postgresBackend is one PostgreSQL server (postgres): a local PgServer or
// a --postgres URL; its own fault target is a session holding a lock.
type postgresBackend struct{}

// Info describes the PostgreSQL backend.
func (postgresBackend) Info() BackendInfo {
	return BackendInfo{Name: lockimpl.BackendPostgres, URLFlag: "postgres",
		URLUsage: "external PostgreSQL URL postgres://[user:pass@]host:port/database for --topology postgres (default: initdb and start a local server)",
		URLDoc:   "The run creates its tables if missing (lockbench_lease, lockbench_resource, lockbench_resource_state, lockbench_resource_holders) and deletes only its own rows; redacted like `--redis`",
		Schemes:  []string{"postgres", "postgresql"}, SampleURL: "postgres://lockbench@127.0.0.1:5432/lockbench",
		Targets: map[FaultTarget]string{TargetHolder: "it has no lock sessions to terminate"}}
}

// CheckURL checks a --postgres URL.
func (postgresBackend) CheckURL(raw string) error { return ParsePgURL(raw) }

// target resolves the holder's server: terminate picks the session there.
func (postgresBackend) target(_ context.Context, t *Topology, f FaultSpec) (*Node, error) {
	if f.Target != TargetHolder {
		return nil, fmt.Errorf("topology %s has no %s", t.Spec, f.Target)
	}
	return t.pgNodeOf()
}

// pgOf is n's PostgreSQL payload, nil on a node of another backend.
func (n *Node) pgOf() *pgNode {
	p, _ := n.payload.(*pgNode)
	return p
}

// process: the process faults act on the local PgServer (every process
// of it), which an external server does not have.
func (p *pgNode) process() nodeProcess {
	if p.server == nil {
		return nil
	}
	return localProcess{p: p.server, start: p.server.Start, startTimeout: 30 * time.Second}
}

// down reports whether the local server was stopped by a fault.
func (p *pgNode) down() bool { return p.server != nil && p.server.PID() == 0 }
