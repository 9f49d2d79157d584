package contacts

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	entsql "entgo.io/ent/dialect/sql"
	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/check"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/extref"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/app/platform/identity"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/contact"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// MatchInput is the body of POST /contacts/match: at least one property.
type MatchInput struct {
	Type        *string `json:"type,omitempty"`
	Email       *string `json:"email,omitempty"`
	Phone       *string `json:"phone,omitempty"`
	FirstName   *string `json:"firstName,omitempty"`
	LastName    *string `json:"lastName,omitempty"`
	DateOfBirth *string `json:"dateOfBirth,omitempty"`
	CompanyName *string `json:"companyName,omitempty"`
	// ExternalReference is ours (the spec's matchedBy lists external_reference but its body
	// names no property for it): the caller's own id of the contact.
	ExternalReference *schematype.ExternalRef `json:"externalReference,omitempty"`
}

// Validate checks the body of POST /contacts/match.
func (in MatchInput) Validate() error {
	var v errs.Invalid
	v.Check("body", in.Type != nil || in.Email != nil || in.Phone != nil || in.FirstName != nil || in.LastName != nil ||
		in.DateOfBirth != nil || in.CompanyName != nil || in.ExternalReference != nil, "required", "give at least one property")
	if in.ExternalReference != nil {
		var rv errs.Invalid
		extref.Check(&rv, []schematype.ExternalRef{*in.ExternalReference})
		for _, e := range rv.Errors { // externalReferences.0.source -> externalReference.source
			_, field, _ := strings.Cut(strings.TrimPrefix(e.Field, "externalReferences."), ".")
			v.Add("externalReference."+field, e.Code, e.Detail)
		}
	}
	if in.Type != nil {
		v.Check("type", *in.Type == TypePrivate || *in.Type == TypeBusiness, "invalid_enum", "must be private or business")
	}
	if in.Email != nil {
		v.Check("email", check.ValidEmail(*in.Email), "invalid_email", "must be an e-mail address")
	}
	if in.Phone != nil {
		_, ok := identity.PhoneKey(*in.Phone)
		v.Check("phone", ok, "invalid_phone", "must be a phone number")
	}
	if in.DateOfBirth != nil {
		_, err := time.Parse(time.DateOnly, *in.DateOfBirth)
		v.Check("dateOfBirth", err == nil, "invalid_date", "must be a date (YYYY-MM-DD)")
	}
	check.Len(&v, "firstName", in.FirstName, check.MaxName)
	check.Len(&v, "lastName", in.LastName, check.MaxName)
	check.Len(&v, "companyName", in.CompanyName, MaxCompanyName)
	return v.Err()
}

// Match scores: one matcher alone; several combine as 1 - Π(1 - s).
// The caller's own external reference names the contact itself: 1.
var matchScores = map[string]float64{"email": 0.9, "phone": 0.7, "name_and_birthdate": 0.85, "company_name": 0.6,
	"external_reference": 1}

// MaxMatches bounds the answer of POST /contacts/match.
const MaxMatches = 20

// MatchResult is one candidate of POST /contacts/match.
type MatchResult struct {
	Contact   View     `json:"contact"`
	MatchedBy []string `json:"matchedBy"`
	Score     float64  `json:"score"`
}

// Match finds visible contacts matching in, best first. What is normalised: e-mail trimmed and
// lower-cased; phones in E.164 (German default); names by identity.NameKey (case, umlauts
// ä→ae, ß→ss, dashes and spaces); company names by identity.CompanyKey (also punctuation and
// spelled-out legal forms: "Gesellschaft mit beschränkter Haftung" is "GmbH").
func (s *Service) Match(ctx context.Context, in MatchInput) ([]MatchResult, error) {
	db := tenancy.Client(ctx)
	var preds []func(*entsql.Selector) *entsql.Predicate
	if in.Email != nil {
		preds = append(preds, func(sel *entsql.Selector) *entsql.Predicate {
			return entsql.EQ(sel.C(contact.FieldEmailKey), identity.EmailKey(*in.Email))
		})
	}
	phoneKey := ""
	if in.Phone != nil {
		phoneKey, _ = identity.PhoneKey(*in.Phone)
		preds = append(preds, func(sel *entsql.Selector) *entsql.Predicate { return phonePredicate(sel, phoneKey) })
	}
	if in.DateOfBirth != nil && in.LastName != nil {
		dob := *in.DateOfBirth
		preds = append(preds, func(sel *entsql.Selector) *entsql.Predicate {
			return entsql.P(func(b *entsql.Builder) {
				b.WriteString("(" + sel.C(contact.FieldGroups) + "->'personal'->>'dateOfBirth') = ")
				b.Arg(dob)
			})
		})
	}
	companyKey := ""
	if in.CompanyName != nil {
		companyKey = identity.CompanyKey(*in.CompanyName)
		if first, _, _ := strings.Cut(companyKey, " "); len(first) >= 2 {
			preds = append(preds, func(sel *entsql.Selector) *entsql.Predicate {
				return entsql.P(func(b *entsql.Builder) {
					b.WriteString("replace(replace(replace(replace(lower(" + sel.C(contact.FieldCompanyName) +
						"), 'ä', 'ae'), 'ö', 'oe'), 'ü', 'ue'), 'ß', 'ss') LIKE ")
					b.Arg("%" + escapeLike(first) + "%")
				})
			})
		}
	}
	byRefID := uuid.Nil
	if in.ExternalReference != nil {
		// extref.Owner sees every contact's references; the query below reads through the
		// visibility layers, so a contact the caller may not see is no candidate.
		id, ok, err := extref.Owner(ctx, refResource, *in.ExternalReference)
		if err != nil {
			return nil, err
		}
		if ok {
			byRefID = id
			preds = append(preds, func(sel *entsql.Selector) *entsql.Predicate { return entsql.EQ(sel.C(contact.FieldID), id) })
		}
	}
	out := []MatchResult{}
	if len(preds) == 0 {
		return out, nil
	}
	q := db.Contact.Query().Where(func(sel *entsql.Selector) {
		ps := make([]*entsql.Predicate, 0, len(preds))
		for _, p := range preds {
			ps = append(ps, p(sel))
		}
		sel.Where(entsql.Or(ps...))
	})
	if in.Type != nil {
		q.Where(contact.TypeEQ(contact.Type(*in.Type)))
	}
	found, err := q.Order(ent.Asc(contact.FieldCreatedAt), ent.Asc(contact.FieldID)).Limit(500).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("match contacts: %w", err)
	}
	ids := make([]uuid.UUID, len(found))
	for i, c := range found {
		ids[i] = c.ID
	}
	phones, err := s.phonesOf(ctx, ids...)
	if err != nil {
		return nil, err
	}
	for _, c := range found {
		var by []string
		if in.Email != nil && c.EmailKey != nil && *c.EmailKey == identity.EmailKey(*in.Email) {
			by = append(by, "email")
		}
		if phoneKey != "" && slices.ContainsFunc(phones[c.ID], func(p *ent.ContactPhone) bool { return p.NumberKey == phoneKey }) {
			by = append(by, "phone")
		}
		if in.DateOfBirth != nil && in.LastName != nil {
			dob, _ := c.Groups["personal"]["dateOfBirth"].(string)
			sameFirst := in.FirstName == nil || identity.NameKey(*in.FirstName) == identity.NameKey(c.FirstName)
			if dob == *in.DateOfBirth && sameFirst && identity.NameKey(*in.LastName) == identity.NameKey(c.LastName) {
				by = append(by, "name_and_birthdate")
			}
		}
		if companyKey != "" && c.CompanyName != "" && identity.CompanyKey(c.CompanyName) == companyKey {
			by = append(by, "company_name")
		}
		if byRefID != uuid.Nil && c.ID == byRefID {
			by = append(by, "external_reference")
		}
		if len(by) == 0 {
			continue
		}
		miss := 1.0
		for _, m := range by {
			miss *= 1 - matchScores[m]
		}
		out = append(out, MatchResult{Contact: NewView(c, phones[c.ID]), MatchedBy: by, Score: float64(int((1-miss)*1000+0.5)) / 1000})
	}
	slices.SortStableFunc(out, func(a, b MatchResult) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return 0
	})
	if len(out) > MaxMatches {
		out = out[:MaxMatches]
	}
	return out, nil
}

// match handles POST /contacts/match. Candidates carry the non-sensitive groups (a summary).
func (h *Handler) match(c *fiber.Ctx) error {
	var in MatchInput
	if err := httpx.Decode(c, &in); err != nil {
		return err
	}
	res, err := h.svc.Match(c.UserContext(), in)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"data": res})
}
