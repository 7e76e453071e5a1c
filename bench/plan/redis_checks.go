package plan

import "github.com/lockbench/lockbench/lockimpl"

// redisChecks refuses a renewal on a Redis lock whose holder cannot renew
// (rueidislock, valkeylock: the library extends its keys itself, in the
// background): --renew-every would only record failed renewals.
func (p *parser) redisChecks(pl *Plan) {
	if p.err != nil || lockimpl.IsRenewable(pl.Lock) || pl.Workload.RenewEvery <= 0 {
		return
	}
	p.fail("renew-every", "%s has nothing for its holder to renew: the library extends its keys itself, in the background; drop --renew-every", pl.Lock)
}
