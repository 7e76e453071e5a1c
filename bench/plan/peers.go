package plan

import (
	"github.com/lockbench/lockbench/lockimpl"
)

// peerOptions parses --peer-option for the plan's lock, refusing options
// the lock does not take.
func (p *parser) peerOptions(lock string) lockimpl.PeerOptions {
	o, err := lockimpl.ParsePeerOptions(lock, p.v["peer-option"])
	if err != nil {
		p.fail("peer-option", "%v", err)
	}
	return o
}
