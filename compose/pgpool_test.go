package compose_test

import (
	"strings"
	"testing"

	"github.com/lockbench/lockbench/compose"
)

func TestParsePgURL(t *testing.T) {
	for _, tc := range []struct{ in, bad string }{
		{"postgres://lockbench@127.0.0.1:5432/postgres?sslmode=disable", ""},
		{"postgresql://u:secretpw@db.example:6543/app", ""},
		{"postgres://u:secretpw@db/app", ""},
		{"mysql://u:secretpw@db/app", `scheme "mysql"`},
		{"postgres://u:secretpw@/app", "no host"},
		{"postgres://u:secretpw@db:5432", "no database"},
		{"postgres://u:secretpw@db:99999/app", "port 99999"},
		{"postgres://u:secretpw@db/app?sslmode=sometimes", "sslmode"},
		{"not a url at all", "scheme"},
	} {
		err := compose.ParsePgURL(tc.in)
		switch {
		case tc.bad == "" && err != nil:
			t.Errorf("%q refused: %v", tc.in, err)
		case tc.bad != "" && (err == nil || !strings.Contains(err.Error(), tc.bad)):
			t.Errorf("%q = %v, want an error about %q", tc.in, err, tc.bad)
		case err != nil && (strings.Contains(err.Error(), "secretpw") || strings.Contains(err.Error(), "\n")):
			t.Errorf("%q: error repeats the password or spans lines: %v", tc.in, err)
		}
	}
}

func FuzzParsePgURL(f *testing.F) {
	for _, s := range []string{"postgres://u:pw@h:5432/db", "postgresql://h/db?sslmode=disable", "postgres://u:pw@h:0/db",
		"postgres://:@/", "postgres://u:p%zz@h/db", "postgres://h/db?connect_timeout=x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		err := compose.ParsePgURL(s)
		if err == nil {
			return
		}
		_, rest, _ := strings.Cut(s, "://")
		if at := strings.LastIndex(rest, "@"); at >= 0 {
			if _, pw, _ := strings.Cut(rest[:at], ":"); len(pw) > 3 && strings.Contains(err.Error(), pw) {
				t.Fatalf("error repeats the password %q: %v", pw, err)
			}
		}
	})
}
