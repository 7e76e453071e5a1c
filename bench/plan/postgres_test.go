package plan

import (
	"strings"
	"testing"
)

// TestPostgresRefusals: a lock on the wrong kind of server, a malformed
// URL, renewal of a lock without TTL and a resource elsewhere for a lock
// whose write is its own are bad input naming the flag, in one line.
func TestPostgresRefusals(t *testing.T) {
	for _, tc := range []struct {
		v          Values
		flag, want string
	}{
		{Values{"topology": {"postgres"}, "lock": {"single"}}, "lock", "cannot run on postgres"},
		{Values{"topology": {"single"}, "lock": {"pg-advisory"}}, "lock", "runs on postgres"},
		{Values{"topology": {"redlock:3"}, "lock": {"occ"}}, "lock", "runs on postgres"},
		{Values{"topology": {"postgres"}, "postgres": {"postgres://u:secretpw@:1/db"}}, "postgres", "no host"},
		{Values{"topology": {"postgres"}, "postgres": {"redis://u:secretpw@h:1"}}, "postgres", "scheme"},
		{Values{"topology": {"single"}, "postgres": {"postgres://h/db"}}, "postgres", "postgres"},
		{Values{"topology": {"postgres"}, "lock": {"pg-advisory"}, "renew-every": {"1s"}}, "renew-every", "no TTL"},
		{Values{"topology": {"postgres"}, "lock": {"pg-advisory-xact"}, "resource": {"postgres://h/db"}}, "resource", "drop --resource"},
		{Values{"topology": {"postgres"}, "lock": {"occ"}, "resource": {"redis://h:1"}}, "resource", "drop --resource"},
		{Values{"topology": {"postgres"}, "resource": {"postgres://u:secretpw@h"}}, "resource", "no database"},
		{Values{"topology": {"postgres"}, "fault": {"at=1s kill holder"}}, "fault", "target of terminate"},
		{Values{"topology": {"single"}, "fault": {"at=1s terminate holder"}}, "fault", "holder is on postgres"},
		{Values{"topology": {"postgres"}, "postgres": {"postgres://h/db"}, "fault": {"at=1s kill node=0"}}, "fault", "external"},
	} {
		_, err := Expand(tc.v)
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		if err == nil || !IsInputError(err) || !strings.Contains(msg, "--"+tc.flag) || !strings.Contains(msg, tc.want) ||
			strings.Contains(msg, "secretpw") || strings.Contains(msg, "\n") {
			t.Errorf("%v: %v; want one input error line naming --%s and %q, without the password", tc.v, err, tc.flag, tc.want)
		}
	}
	for _, v := range []Values{
		{"topology": {"postgres"}},
		{"topology": {"postgres"}, "lock": {"pg-lease"}, "renew-every": {"ttl/3"}},
		{"topology": {"postgres"}, "lock": {"pg-advisory"}, "resource": {"postgres://h/db"}},
		{"topology": {"single"}, "lock": {"fenced"}, "resource": {"postgres://h/db"}},
		{"topology": {"postgres"}, "postgres": {"postgres://u:pw@h:5433/db"}, "fault": {"at=1s terminate holder"}},
	} {
		if _, err := Expand(v); err != nil {
			t.Errorf("%v refused: %v", v, err)
		}
	}
}
