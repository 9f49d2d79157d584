package main

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/brokerdesk/brokerdesk/app/contacts"
	"github.com/brokerdesk/brokerdesk/app/platform/datakeys"
	"github.com/brokerdesk/brokerdesk/app/portal"
)

// keys handles `brokerdesk keys rotate-data`: re-seal every sensitive contact group (and the
// customer portal's sealed values) with the
// first key of DATA_KEYS. Put the new key first, keep the old ones behind it until this ran.
func (e env) keys(ctx context.Context, args []string) error {
	if len(args) == 0 || args[0] != "rotate-data" {
		return fmt.Errorf("keys: want rotate-data")
	}
	fs := e.flags("keys rotate-data")
	batch := fs.Int("batch", 500, "contacts per transaction")
	if _, err := parse(fs, args[1:]); err != nil {
		return err
	}
	u := e.getenv("DATABASE_URL")
	if u == "" {
		return fmt.Errorf("DATABASE_URL is not set (operator commands connect as the owner)")
	}
	secret := []byte(e.getenv("APP_SECRET"))
	if e.getenv("DATA_KEYS") == "" && len(secret) == 0 {
		return fmt.Errorf("DATA_KEYS (or APP_SECRET, from which the default key derives) is not set")
	}
	keys, err := datakeys.FromConfig(e.getenv("DATA_KEYS"), secret)
	if err != nil {
		return fmt.Errorf("DATA_KEYS: %w", err)
	}
	db, err := sql.Open("pgx", u)
	if err != nil {
		return err
	}
	defer db.Close()
	n, err := contacts.RotateData(ctx, db, keys, *batch)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "re-sealed the sensitive groups of %d contacts with key %s\n", n, keys.Current())
	// The customer portal's TOTP secrets and sealed bank changes (issue 23).
	if n, err = portal.RotateData(ctx, db, keys, *batch); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "re-sealed %d portal secrets and bank change requests with key %s\n", n, keys.Current())
	return nil
}
