// Package delegations serves /users/{userId}/delegations: a user lets another user of the
// company see its contacts and leads (a deputy during leave, an assistant), optionally until a
// date. The visibility layer (migrations/20261124030000_visibility.sql, ent/rule) reads them.
// This endpoint is ours: the spec lists none (docs/decisions/visibility.md "Delegations").
package delegations

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/delegation"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// View is the Delegation resource.
type View struct {
	ID          uuid.UUID  `json:"id"`
	DelegatorID uuid.UUID  `json:"delegatorId"`
	DelegateID  uuid.UUID  `json:"delegateId"`
	ValidUntil  *time.Time `json:"validUntil"`
	Active      bool       `json:"active"`
	CreatedAt   time.Time  `json:"createdAt"`
}

// NewView is the Delegation resource of d at now.
func NewView(d *ent.Delegation, now time.Time) View {
	return View{ID: d.ID, DelegatorID: d.DelegatorID, DelegateID: d.DelegateID, ValidUntil: d.ValidUntil,
		Active: d.ValidUntil == nil || d.ValidUntil.After(now), CreatedAt: d.CreatedAt}
}

// CreateInput is the body of POST /users/{userId}/delegations.
type CreateInput struct {
	DelegateID *uuid.UUID `json:"delegateId"`
	ValidUntil *time.Time `json:"validUntil"`
}

// Service manages delegations in the company ctx is pinned to (tenancy.Client).
type Service struct{ now func() time.Time }

// NewService returns the service; now is the clock.
func NewService(now func() time.Time) *Service {
	if now == nil {
		now = time.Now
	}
	return &Service{now: now}
}

// userExists reports a 404 for a user not in the company.
func userExists(ctx context.Context, id uuid.UUID) error {
	ok, err := tenancy.Client(ctx).User.Query().Where(userID(id)).Exist(ctx)
	if err != nil {
		return fmt.Errorf("find user %s: %w", id, err)
	}
	if !ok {
		return errs.NotFound("user %s not found", id)
	}
	return nil
}

// Create lets delegate see delegator's contacts and leads until in.ValidUntil (forever when
// unset). 404 for an unknown user, 409 when the pair exists, 422 for self-delegation or a past
// validUntil.
func (s *Service) Create(ctx context.Context, delegator uuid.UUID, in CreateInput) (*ent.Delegation, error) {
	var v errs.Invalid
	v.Require("delegateId", in.DelegateID != nil)
	if in.DelegateID != nil {
		v.Check("delegateId", *in.DelegateID != delegator, "self_delegation", "a user cannot delegate to itself")
	}
	if in.ValidUntil != nil {
		v.Check("validUntil", in.ValidUntil.After(s.now()), "in_the_past", "must lie in the future")
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	if err := userExists(ctx, delegator); err != nil {
		return nil, err
	}
	if err := userExists(ctx, *in.DelegateID); err != nil {
		return nil, errs.InvalidField("delegateId", "unknown_user", "is not a user of this company")
	}
	db := tenancy.Client(ctx)
	taken, err := db.Delegation.Query().Where(delegation.DelegatorID(delegator), delegation.DelegateID(*in.DelegateID)).Exist(ctx)
	if err != nil {
		return nil, fmt.Errorf("create delegation: %w", err)
	}
	if taken {
		return nil, errs.Conflict("delegation_exists", "user %s already delegates to %s; delete that delegation first", delegator, *in.DelegateID)
	}
	c := db.Delegation.Create().SetDelegatorID(delegator).SetDelegateID(*in.DelegateID).SetCreatedAt(s.now())
	if in.ValidUntil != nil {
		c.SetValidUntil(in.ValidUntil.UTC())
	}
	d, err := c.Save(ctx)
	if ent.IsConstraintError(err) {
		return nil, errs.Conflict("delegation_exists", "user %s already delegates to %s", delegator, *in.DelegateID)
	}
	if err != nil {
		return nil, fmt.Errorf("create delegation: %w", err)
	}
	return d, nil
}

// List returns the delegations delegator gave, oldest first (expired ones too, marked
// inactive). 404 for an unknown user.
func (s *Service) List(ctx context.Context, delegator uuid.UUID) ([]*ent.Delegation, error) {
	if err := userExists(ctx, delegator); err != nil {
		return nil, err
	}
	return tenancy.Client(ctx).Delegation.Query().Where(delegation.DelegatorID(delegator)).
		Order(ent.Asc(delegation.FieldCreatedAt), ent.Asc(delegation.FieldID)).All(ctx)
}

// Delete removes delegation id of delegator; 404 when there is none.
func (s *Service) Delete(ctx context.Context, delegator, id uuid.UUID) error {
	n, err := tenancy.Client(ctx).Delegation.Delete().
		Where(delegation.ID(id), delegation.DelegatorID(delegator)).Exec(ctx)
	if err != nil {
		return fmt.Errorf("delete delegation %s: %w", id, err)
	}
	if n == 0 {
		return errs.NotFound("delegation %s not found", id)
	}
	return nil
}

// Now is the service's clock (views mark expired delegations with it).
func (s *Service) Now() time.Time { return s.now() }
