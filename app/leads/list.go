package leads

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/identity"
	"github.com/brokerdesk/brokerdesk/app/platform/paging"
	"github.com/brokerdesk/brokerdesk/ent/lead"
	"github.com/brokerdesk/brokerdesk/ent/predicate"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// ListFilter narrows GET /leads. Nil fields do not filter.
type ListFilter struct {
	UpdatedSince *time.Time
	Search       string
	StageID      *uuid.UUID
	OwnerID      *uuid.UUID
	Source       *string
	Converted    *bool
	IncludeTest  bool
}

// oldestFirst orders GET /leads: (createdAt, id).
var oldestFirst = paging.ByCreated(func(l Lead) (time.Time, uuid.UUID) { return l.CreatedAt, l.ID })

// List returns a page of the leads matching f, oldest first (createdAt, then id), each with its
// attachments (content not loaded).
func (s *Service) List(ctx context.Context, f ListFilter, page paging.Page) ([]Lead, error) {
	k, err := oldestFirst.Apply(page)
	if err != nil {
		return nil, err
	}
	q := tenancy.Client(ctx).Lead.Query()
	if !f.IncludeTest {
		q.Where(lead.Test(false))
	}
	q.Where(paging.If(f.UpdatedSince, lead.UpdatedAtGTE)...)
	if f.Search != "" {
		q.Where(search(f.Search))
	}
	q.Where(paging.If(f.StageID, lead.StageID)...)
	q.Where(paging.If(f.OwnerID, lead.OwnerID)...)
	q.Where(paging.Enum(f.Source, lead.SourceEQ)...)
	q.Where(paging.If(f.Converted, lead.Converted)...)
	rows, err := q.WithAttachments(withoutContent).Where(k.Where).Order(k.Order).Limit(k.Limit).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("list leads: %w", err)
	}
	out := make([]Lead, len(rows))
	for i, l := range rows {
		out[i] = Lead{Lead: l, Attachments: l.Edges.Attachments}
	}
	return out, nil
}

// search matches term in the full name ("first last"), the e-mail address and, when term
// looks like a phone number, the phone: the same number in E.164, or its digits (without
// leading zeros) inside the stored number. Case-insensitive; % and _ match themselves.
func search(term string) predicate.Lead {
	preds := []predicate.Lead{
		fullNameLike("%" + escapeLike(term) + "%"),
		lead.EmailContainsFold(term),
	}
	if strings.Trim(term, "0123456789 +-/().") == "" {
		if key, ok := identity.PhoneKey(term); ok {
			preds = append(preds, lead.PhoneKey(key))
		}
		digits := strings.TrimLeft(strings.Map(func(r rune) rune {
			if r >= '0' && r <= '9' {
				return r
			}
			return -1
		}, term), "0")
		if len(digits) >= 4 {
			preds = append(preds, lead.PhoneKeyContains(digits))
		}
	}
	return lead.Or(preds...)
}

// escapeLike escapes the LIKE wildcards of s (PostgreSQL's default escape character is \).
func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}
