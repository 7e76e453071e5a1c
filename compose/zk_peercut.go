package compose

import "errors"

// cutApart cuts every link between two members that apart says are on two
// sides, both ways, on the quorum and election ports, until the undo (the
// isolate fault's minority and ring); the clients still reach every member.
func (e *ZkEnsemble) cutApart(apart func(i, j int) bool) (func() error, error) {
	if e.links == nil {
		return nil, errors.New("the ensemble was started without peer proxies (ZkOptions.PeerProxy)")
	}
	return e.links.cut(apart)
}
