// Command migdiff writes the next versioned migration from the ent schemas, or re-hashes
// migrations/atlas.sum after a hand-written file was added.
//
//	go run ./cmd/migdiff -name add_contacts     # needs DEV_DATABASE_URL (or local postgres)
//	go run ./cmd/migdiff -hash
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"os"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/brokerdesk/brokerdesk/migrations"
	"github.com/brokerdesk/brokerdesk/test/pgtest"
)

func main() {
	name := flag.String("name", "", "name of the migration to write")
	hash := flag.Bool("hash", false, "only rewrite atlas.sum")
	dir := flag.String("dir", "migrations", "migration directory")
	flag.Parse()
	if err := run(*dir, *name, *hash); err != nil {
		fmt.Fprintln(os.Stderr, "migdiff:", err)
		os.Exit(1)
	}
}

func run(dir, name string, hash bool) error {
	if hash {
		return migrations.Rehash(dir)
	}
	if name == "" {
		return fmt.Errorf("-name is required")
	}
	ctx := context.Background()
	admin := os.Getenv("DEV_DATABASE_URL")
	if admin == "" {
		admin = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
	}
	devURL, drop, err := pgtest.EmptyDatabase(ctx, admin)
	if err != nil {
		return err
	}
	defer drop()
	db, err := sql.Open("pgx", devURL)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := migrations.EnsureRoles(ctx, db, ""); err != nil {
		return err
	}
	return migrations.Diff(ctx, db, dir, name, false)
}
