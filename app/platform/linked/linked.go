// Package linked holds the check every service runs before it writes a record that points to
// others by id (a task's contact, lead and assignee, an appointment's owner, a lead's owner):
// each id given must name a record the caller sees, else the answer is one 422 naming every
// such field with the same code and detail wherever the field appears. It imports no area.
package linked

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/ent/contact"
	"github.com/brokerdesk/brokerdesk/ent/lead"
	"github.com/brokerdesk/brokerdesk/ent/user"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// A Link is one field of an input that names a record by id; ID nil when the field is not given.
type Link struct {
	field, kind, code, detail string
	id                        *uuid.UUID
	exists                    func(context.Context, uuid.UUID) (bool, error)
}

// User names a user of the company.
func User(field string, id *uuid.UUID) Link {
	return Link{field, "user", "unknown_user", "is not a user of this company (see GET /users)", id,
		func(ctx context.Context, id uuid.UUID) (bool, error) {
			return tenancy.Client(ctx).User.Query().Where(user.ID(id)).Exist(ctx)
		}}
}

// Contact names a contact the caller sees.
func Contact(field string, id *uuid.UUID) Link {
	return Link{field, "contact", "unknown_contact", "is not a contact of this company", id,
		func(ctx context.Context, id uuid.UUID) (bool, error) {
			return tenancy.Client(ctx).Contact.Query().Where(contact.ID(id)).Exist(ctx)
		}}
}

// Lead names a lead the caller sees.
func Lead(field string, id *uuid.UUID) Link {
	return Link{field, "lead", "unknown_lead", "is not a lead of this company", id,
		func(ctx context.Context, id uuid.UUID) (bool, error) {
			return tenancy.Client(ctx).Lead.Query().Where(lead.ID(id)).Exist(ctx)
		}}
}

// Check adds to v, in the order given, each link whose id names no record the caller sees
// (another company's, outside the caller's visibility, or none); links without an id pass.
// The caller answers v.Err() once its other checks have added theirs.
func Check(ctx context.Context, v *errs.Invalid, links ...Link) error {
	for _, l := range links {
		if l.id == nil {
			continue
		}
		ok, err := l.exists(ctx, *l.id)
		if err != nil {
			return fmt.Errorf("check %s %s: %w", l.field, l.kind, err)
		}
		v.Check(l.field, ok, l.code, l.detail)
	}
	return nil
}
