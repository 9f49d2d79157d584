package privacy

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/paging"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/contact"
	"github.com/brokerdesk/brokerdesk/ent/privacyrequest"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// Filter narrows GET /privacy-requests. Nil fields do not filter.
type Filter struct {
	Type, Status *string
	ContactID    *uuid.UUID
}

var newestFirst = paging.ByCreatedDesc(func(r *ent.PrivacyRequest) (time.Time, uuid.UUID) { return r.CreatedAt, r.ID })

// List returns a page of the requests matching f that the credential may see, newest first.
func (s *Service) List(ctx context.Context, f Filter, page paging.Page) ([]*ent.PrivacyRequest, error) {
	return newestFirst.Rows(page, "privacy requests", func(k paging.Query) ([]*ent.PrivacyRequest, error) {
		return tenancy.Client(ctx).PrivacyRequest.Query().
			Where(paging.Enum(f.Type, privacyrequest.TypeEQ)...).
			Where(paging.Enum(f.Status, privacyrequest.StatusEQ)...).
			Where(paging.If(f.ContactID, privacyrequest.ContactID)...).
			Where(k.Where).Order(k.Order).Limit(k.Limit).All(ctx)
	})
}

// Created is a request just made, with the download link of an export (shown once).
type Created struct {
	*ent.PrivacyRequest
	DownloadURL *string
}

// View is the resource of the created request, with its link.
func (c Created) View() View {
	v := NewView(c.PrivacyRequest)
	v.DownloadURL = c.DownloadURL
	return v
}

// NewRequest is what a request is made of.
type NewRequest struct {
	Type        privacyrequest.Type
	ContactID   uuid.UUID
	Reason      *string
	RequestedAt *time.Time
}

// Create records a request about a contact the credential may see and inserts its job in the
// same transaction (jobs.RowTx, pinned like the request: another company's or an unseen
// contact is 404). An export gets its download token now, so the answer can carry the link;
// the link serves the file once the job has written it.
func (s *Service) Create(ctx context.Context, in NewRequest) (Created, error) {
	company, ok := tenancy.CompanyID(ctx)
	if !ok {
		return Created{}, tenancy.ErrNoCompany
	}
	now := s.m.now()
	requested := now
	if in.RequestedAt != nil {
		requested = in.RequestedAt.UTC()
	}
	var out Created
	err := s.m.rowTx.Run(context.WithoutCancel(ctx), func(ctx context.Context, db *ent.Client, insert func(river.JobArgs) error) error {
		c, err := db.Contact.Query().Where(contact.ID(in.ContactID)).Select(contact.FieldID, contact.FieldOwnerID).Only(ctx)
		if err != nil {
			return errs.FromEnt(err, "contact %s", in.ContactID)
		}
		q := db.PrivacyRequest.Create().SetCreatedAt(now).SetUpdatedAt(now).SetType(in.Type).
			SetContactID(c.ID).SetNillableOwnerID(c.OwnerID).SetNillableReason(in.Reason).SetRequestedAt(requested)
		if p, ok := tenancy.PrincipalFrom(ctx); ok && p.HasUser() {
			q.SetCreatorID(p.UserID)
		}
		if in.Type == privacyrequest.TypeDataExport {
			token, hash := newToken(company)
			q.SetDownloadTokenHash(hash)
			link := s.m.d.PublicURL + downloadPath + token
			out.DownloadURL = &link
		}
		if out.PrivacyRequest, err = q.Save(ctx); err != nil {
			return fmt.Errorf("store privacy request: %w", err)
		}
		var args river.JobArgs = ExportArgs{CompanyID: company, RequestID: out.ID}
		if in.Type == privacyrequest.TypeErasure {
			args = EraseArgs{CompanyID: company, RequestID: out.ID}
		}
		if err := insert(args); err != nil {
			return fmt.Errorf("queue privacy request: %w", err)
		}
		return nil
	})
	return out, err
}
