// Package groupnames names the keys of a report's rows grouped by insurer or by owner: the
// insurer's name, the user's name (else its e-mail). The portfolio and the commission reports
// label their rows with it.
package groupnames

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/ent/insurer"
	"github.com/brokerdesk/brokerdesk/ent/user"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// Of returns the names of keys (ids as text; nil and malformed ones are skipped) for groupBy
// "insurer" or "owner", read in the transaction of ctx in one query; any other groupBy has none.
func Of(ctx context.Context, groupBy string, keys []*string) (map[string]string, error) {
	names := map[string]string{}
	if groupBy != "insurer" && groupBy != "owner" {
		return names, nil
	}
	var ids []uuid.UUID
	for _, k := range keys {
		if k == nil {
			continue
		}
		if id, err := uuid.Parse(*k); err == nil {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return names, nil
	}
	if groupBy == "insurer" {
		ins, err := tenancy.Client(ctx).Insurer.Query().Where(insurer.IDIn(ids...)).All(ctx)
		if err != nil {
			return nil, fmt.Errorf("insurer names: %w", err)
		}
		for _, i := range ins {
			names[i.ID.String()] = i.Name
		}
		return names, nil
	}
	us, err := tenancy.Client(ctx).User.Query().Where(user.IDIn(ids...)).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("owner names: %w", err)
	}
	for _, u := range us {
		n := strings.TrimSpace(u.FirstName + " " + u.LastName)
		if n == "" {
			n = u.Email
		}
		names[u.ID.String()] = n
	}
	return names, nil
}
