package users

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/paging"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/user"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// Service reads the users of the company pinned in ctx, in the request's transaction.
type Service struct{}

// Filter narrows GET /users. Empty fields do not filter; Email is lower-case.
type Filter struct {
	Status string
	Email  string
}

// oldestFirst orders GET /users: (createdAt, id).
var oldestFirst = paging.ByCreated(func(u *ent.User) (time.Time, uuid.UUID) { return u.CreatedAt, u.ID })

// List returns a page of the users matching f, oldest first.
func (s *Service) List(ctx context.Context, f Filter, page paging.Page) ([]*ent.User, error) {
	k, err := oldestFirst.Apply(page)
	if err != nil {
		return nil, err
	}
	q := tenancy.Client(ctx).User.Query()
	if f.Status != "" {
		q.Where(user.StatusEQ(user.Status(f.Status)))
	}
	if f.Email != "" {
		q.Where(user.Email(f.Email))
	}
	rows, err := q.Where(k.Where).Order(k.Order).Limit(k.Limit).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("list users: %w", err)
	}
	return rows, nil
}

// Get reads one user of the company.
func (s *Service) Get(ctx context.Context, id uuid.UUID) (*ent.User, error) {
	u, err := tenancy.Client(ctx).User.Get(ctx, id)
	return u, errs.FromEnt(err, "user %s", id)
}
