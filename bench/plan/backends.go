package plan

import (
	"context"
	"slices"
	"strings"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/lockimpl"
)

// planBackend is what plan does with one backend's topologies: the checks
// of a plan only its locks need (nil for none), and how a run reaches the
// started servers and builds the lock over them. Each backend's are in a
// file of its own (redis.go, etcd.go, postgres.go).
type planBackend struct {
	check func(p *parser, pl *Plan)
	arm   armFunc
	// resource, when set, keeps the protected resource in a server of the
	// backend that --resource names by URL.
	resource openResource
}

// openResource reaches the server at url and keeps the protected resource
// there under prefix; close removes what a lone run left (lone) and lets
// the server go.
type openResource func(ctx context.Context, url string, pool int, prefix string) (res bench.Protected, close func(lone bool), err error)

// planBackends is the registry, by backend (compose.KindInfo.Backend): one
// line per backend. TestEveryBackendIsArmed holds it to compose's backends.
func planBackends() map[string]planBackend {
	return map[string]planBackend{
		lockimpl.BackendRedis:     {check: (*parser).redisChecks, arm: armRedis, resource: openRedisResource},
		lockimpl.BackendEtcd:      {check: (*parser).etcdChecks, arm: armEtcd},
		lockimpl.BackendPostgres:  {check: (*parser).pgChecks, arm: armPostgres, resource: openPgResource},
		lockimpl.BackendZookeeper: {check: (*parser).zkChecks, arm: armZk},
		lockimpl.BackendNats:      {check: (*parser).natsChecks, arm: armNats},
	}
}

// armers are the arm functions by backend, from planBackends.
func armers() map[string]armFunc {
	out := map[string]armFunc{}
	for name, b := range planBackends() {
		out[name] = b.arm
	}
	return out
}

// backendChecks runs the checks of the plan's topology's backend.
func (p *parser) backendChecks(pl *Plan) {
	if b, ok := planBackends()[pl.Topology.Info().Backend]; ok && b.check != nil {
		b.check(p, pl)
	}
}

// resourceDefault is the backend of a --resource URL of no resource
// backend's scheme: its refusal then names the other forms.
const resourceDefault = lockimpl.BackendRedis

// resourceBackend is the backend keeping the protected resource that
// --resource url names: the one with a resource whose scheme url has, else
// resourceDefault.
func resourceBackend(url string) (compose.Backend, planBackend) {
	scheme, _, _ := strings.Cut(url, "://")
	pbs := planBackends()
	for _, b := range compose.Backends() {
		if pb := pbs[b.Info().Name]; pb.resource != nil && slices.Contains(b.Info().Schemes, scheme) {
			return b, pb
		}
	}
	b, _ := compose.LookupBackend(resourceDefault)
	return b, pbs[resourceDefault]
}

// checkResourceURL accepts a --resource URL of a backend that keeps the
// resource, by that backend's own URL check; a refusal from the default
// backend names the other backends' forms.
func (p *parser) checkResourceURL(u string) {
	b, _ := resourceBackend(u)
	flag := b.Info().URLFlag
	err := b.CheckURL(u)
	if err == nil {
		return
	}
	msg := strings.TrimPrefix(err.Error(), "--"+flag+" ")
	if b.Info().Name == resourceDefault {
		var others []string
		for _, o := range compose.Backends() {
			if o.Info().Name != resourceDefault && planBackends()[o.Info().Name].resource != nil {
				others = append(others, o.Info().Schemes[0]+"://…")
			}
		}
		if len(others) > 0 {
			msg += " (or " + strings.Join(others, " or ") + ")"
		}
	}
	p.fail("resource", "%s", msg)
}
