package main

import (
	"context"
	"database/sql"

	"github.com/brokerdesk/brokerdesk/migrations"
)

// migrateURL applies the migrations to the database at ownerURL.
func migrateURL(ctx context.Context, ownerURL, appPassword string) ([]string, error) {
	db, err := sql.Open("pgx", ownerURL)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	return migrations.Up(ctx, db, appPassword)
}
