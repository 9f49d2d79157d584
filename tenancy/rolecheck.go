package tenancy

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/brokerdesk/brokerdesk/migrations"
)

// roleCheckQuery describes the current role: the rights that would let it past row-level
// security or into other companies' rows. Roles it is a member of count as its own (SET ROLE
// reaches them whether or not it inherits).
const roleCheckQuery = `
SELECT r.rolname, r.rolsuper, r.rolbypassrls,
  coalesce((SELECT string_agg(DISTINCT c.relname, ', ') FROM pg_class c
            JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE pg_has_role(r.oid, c.relowner, 'MEMBER') AND c.relkind IN ('r', 'p')
              AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_temp%'
              AND n.nspname NOT LIKE 'pg_toast%'), ''),
  coalesce((SELECT string_agg(b.rolname, ', ' ORDER BY b.rolname) FROM pg_roles b
            WHERE b.oid <> r.oid AND pg_has_role(r.oid, b.oid, 'MEMBER')
              AND (b.rolname = ANY($1) OR b.rolsuper OR b.rolbypassrls)), ''),
  has_database_privilege(current_database(), 'TEMPORARY')
FROM pg_roles r WHERE r.rolname = current_user`

// CheckRole refuses a database role that row-level security would not hold: a superuser, a
// role with BYPASSRLS, one that owns a table (directly or through a role it belongs to) or
// belongs to the auth or operator role, or to a superuser or BYPASSRLS role. It also refuses a
// role that may create temporary objects (`brokerdesk migrate` revokes that). The server calls
// it on its request pool before it serves.
func CheckRole(ctx context.Context, db interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}) error {
	var (
		name, owns, member string
		super, bypass, tmp bool
	)
	if err := db.QueryRow(ctx, roleCheckQuery, []string{migrations.RoleAuth, migrations.RoleOperator}).
		Scan(&name, &super, &bypass, &owns, &member, &tmp); err != nil {
		return fmt.Errorf("check database role: %w", err)
	}
	var why []string
	if super {
		why = append(why, "is a superuser")
	}
	if bypass {
		why = append(why, "has BYPASSRLS")
	}
	if owns != "" {
		why = append(why, "owns tables ("+owns+")")
	}
	if member != "" {
		why = append(why, "is a member of "+member)
	}
	if tmp {
		why = append(why, "may create temporary objects (run brokerdesk migrate, which revokes TEMPORARY from PUBLIC)")
	}
	if len(why) > 0 {
		return fmt.Errorf("database role %s %s: row-level security would not hold; serve as %s (APP_DATABASE_URL)",
			name, strings.Join(why, ", "), migrations.RoleApp)
	}
	return nil
}
