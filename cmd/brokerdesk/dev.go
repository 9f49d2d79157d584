package main

import (
	"context"
	"fmt"
)

// dev starts a private PostgreSQL cluster, migrates, seeds a demo company and serves.
func (e env) dev(ctx context.Context, args []string) error {
	return fmt.Errorf("dev: not built yet")
}
