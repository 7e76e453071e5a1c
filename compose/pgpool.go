package compose

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// NewPgPool opens a pool on a PostgreSQL URL with room for maxConns
// sessions, each named app (application_name) so that a fault can tell the
// lock's sessions from the resource's and its own. Errors never carry the
// URL's password.
func NewPgPool(ctx context.Context, rawURL string, maxConns int, app string) (*pgxpool.Pool, error) {
	if err := ParsePgURL(rawURL); err != nil {
		return nil, err
	}
	cfg, err := pgxpool.ParseConfig(rawURL)
	if err != nil {
		return nil, fmt.Errorf("--postgres %q: %s; want %s", RedactURL(rawURL), redactErr(err, rawURL), PgURLHelp)
	}
	if maxConns > 0 {
		cfg.MaxConns = int32(min(maxConns, 1<<30))
	}
	cfg.ConnConfig.ConnectTimeout = 2 * time.Second
	if cfg.ConnConfig.RuntimeParams == nil {
		cfg.ConnConfig.RuntimeParams = map[string]string{}
	}
	cfg.ConnConfig.RuntimeParams["application_name"] = app
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres pool on %s: %s", RedactURL(rawURL), redactErr(err, rawURL))
	}
	return pool, nil
}

// PgURLHelp is the accepted form of a PostgreSQL URL.
const PgURLHelp = "postgres://[user[:password]@]host[:port]/database[?sslmode=…]"

// ParsePgURL checks a --postgres (or --resource) PostgreSQL URL: the
// postgres or postgresql scheme, a host, a port from 1 to 65535, a database,
// and options the driver accepts. Its errors never repeat the password.
func ParsePgURL(raw string) error {
	bad := func(why string) error {
		return fmt.Errorf("--postgres %q: %s; want %s", RedactURL(raw), why, PgURLHelp)
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return bad("not a URL")
	case u.Scheme != "postgres" && u.Scheme != "postgresql":
		return bad(fmt.Sprintf("scheme %q", u.Scheme))
	case u.Hostname() == "":
		return bad("no host")
	case strings.Trim(u.Path, "/") == "":
		return bad("no database")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return bad(fmt.Sprintf("port %s is not from 1 to 65535", p))
		}
	}
	if _, err := pgx.ParseConfig(raw); err != nil {
		return bad(redactErr(err, raw))
	}
	return nil
}
