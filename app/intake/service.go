package intake

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/events"
	"github.com/brokerdesk/brokerdesk/app/leads"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/app/platform/identity"
	"github.com/brokerdesk/brokerdesk/app/platform/ptr"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/lead"
	"github.com/brokerdesk/brokerdesk/ent/leadattachment"
	"github.com/brokerdesk/brokerdesk/ent/leadstage"
	"github.com/brokerdesk/brokerdesk/ent/leadsubmission"
	"github.com/brokerdesk/brokerdesk/ent/predicate"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// Outcome is what a submission did: created a lead or updated a duplicate.
type Outcome string

// Outcomes.
const (
	Created Outcome = "created"
	Updated Outcome = "updated"
)

// Service takes submissions for the company pinned in the context.
type Service struct {
	events *events.Service
	now    func() time.Time
}

// NewService returns the service; now is the clock of notes and submission times.
func NewService(ev *events.Service, now func() time.Time) *Service {
	return &Service{events: ev, now: now}
}

// Result is a stored submission: its outcome and the lead it created or updated.
type Result struct {
	Outcome Outcome
	Lead    *ent.Lead
}

// Submit stores a validated submission in the request's transaction: it updates the company's
// oldest open (not converted) lead of the same test flag that arrived through the intake and is
// the same person (identity.MatchedBy: an e-mail match, preferred, or a phone match where the
// e-mail addresses and names do not disagree), as the company's lead_rules enable e-mail
// and phone matching, or creates a lead in stage new owned by the key's user. Every submission
// is kept as a LeadSubmission, files as LeadAttachments, and lead.created or lead.updated is
// recorded. Leads made through the API are never merged into: the public key must not let
// anyone append to them.
//
// Concurrent submissions of one person are serialised before the lookup by transaction-level
// advisory locks on the company and each identity key, taken in ascending order (so two
// submissions sharing both keys cannot deadlock): the second waits for the first to commit and
// then finds its lead. The candidates are also locked FOR UPDATE, so a submission matching one
// through the other key cannot lose an update either.
func (s *Service) Submit(ctx context.Context, in *Submission, channel leadsubmission.Channel) (Result, error) {
	p, ok := tenancy.PrincipalFrom(ctx)
	if !ok {
		return Result{}, errors.New("intake: no principal in context")
	}
	db := tenancy.Client(ctx)
	co, err := db.Company.Get(ctx, p.CompanyID)
	if err != nil {
		return Result{}, fmt.Errorf("intake: company %s: %w", p.CompanyID, err)
	}
	who := identity.Of(in.Email, in.FirstName, in.LastName, in.Phone)
	emailKey, phoneKey := who.EmailKey, who.PhoneKey()
	var byEmail, byPhone string
	if co.LeadRules.MatchEmail {
		byEmail = emailKey
	}
	if co.LeadRules.MatchPhone {
		byPhone = phoneKey
	}
	if err := lockIdentities(ctx, db, p.CompanyID, byEmail, byPhone); err != nil {
		return Result{}, err
	}
	l, err := findOpen(ctx, db, in.Test, who, byEmail, byPhone)
	if err != nil {
		return Result{}, err
	}
	now := s.now()
	out := Result{Outcome: Updated}
	if l == nil {
		out.Outcome = Created
		l, err = s.create(ctx, db, p, in, emailKey, phoneKey)
	} else {
		l, err = merge(ctx, l, in, emailKey, phoneKey, now)
	}
	if err != nil {
		return Result{}, err
	}
	out.Lead = l
	atts, err := attach(ctx, db, l.ID, in.Files, now)
	if err != nil {
		return Result{}, err
	}
	if err := db.LeadSubmission.Create().SetLeadID(l.ID).SetReceivedAt(now).SetChannel(channel).
		SetOutcome(leadsubmission.Outcome(out.Outcome)).SetCredentialID(p.KeyID).SetPayload(in.payload()).
		Exec(ctx); err != nil {
		return Result{}, fmt.Errorf("intake: submission of lead %s: %w", l.ID, err)
	}
	if err := s.events.Record(ctx, "lead."+string(out.Outcome), leads.NewView(l, atts)); err != nil {
		return Result{}, err
	}
	return out, nil
}

// lockIdentities takes pg_advisory_xact_lock for each identity key, in ascending order. The
// lock ids are 64 bits of SHA-256 over company, kind and key: a collision only serialises two
// unrelated submissions a little longer.
func lockIdentities(ctx context.Context, db *ent.Client, company uuid.UUID, email, phone string) error {
	var ids []int64
	for _, k := range [][2]string{{"email", email}, {"phone", phone}} {
		if k[1] == "" {
			continue
		}
		h := sha256.New()
		h.Write(company[:])
		h.Write([]byte("\x00lead-identity\x00" + k[0] + "\x00" + k[1]))
		ids = append(ids, int64(binary.BigEndian.Uint64(h.Sum(nil))))
	}
	slices.Sort(ids)
	for _, id := range ids {
		if _, err := db.ExecContext(ctx, lockIdentity, id); err != nil {
			return fmt.Errorf("intake: lock identity: %w", err)
		}
	}
	return nil
}

// findOpen returns the lead a submission of person who merges into, locked, or nil: among the
// company's open intake leads of the same test flag, the oldest that is the same person by
// e-mail (when email, the e-mail key to match by, is set), else the oldest that is the same
// person by phone (when phone is set). The rule sees the whole person also when a lead rule
// turns one key off: two different e-mail addresses are two people whatever is matched by.
func findOpen(ctx context.Context, db *ent.Client, test bool, who identity.Person, email, phone string) (*ent.Lead, error) {
	var or []predicate.Lead
	if email != "" {
		or = append(or, lead.EmailKey(email))
	}
	if phone != "" {
		or = append(or, lead.PhoneKey(phone))
	}
	if len(or) == 0 {
		return nil, nil
	}
	cands, err := db.Lead.Query().Where(lead.Converted(false), lead.Test(test), lead.OriginEQ(lead.OriginIntake), lead.Or(or...)).
		Order(lead.ByCreatedAt(), lead.ByID()).ForUpdate().All(ctx)
	if err != nil {
		return nil, fmt.Errorf("intake: find duplicate: %w", err)
	}
	var byPhone *ent.Lead
	for _, c := range cands {
		by := identity.MatchedBy(who, identity.Person{EmailKey: ptr.Deref(c.EmailKey), PhoneKeys: []string{ptr.Deref(c.PhoneKey)},
			FirstName: c.FirstName, LastName: c.LastName})
		if email != "" && slices.Contains(by, "email") {
			return c, nil
		}
		if phone != "" && byPhone == nil && slices.Contains(by, "phone") {
			byPhone = c
		}
	}
	return byPhone, nil
}

func (s *Service) create(ctx context.Context, db *ent.Client, p *tenancy.Principal, in *Submission, emailKey, phoneKey string) (*ent.Lead, error) {
	stage, err := db.LeadStage.Query().Where(leadstage.Key("new")).Only(ctx)
	if err != nil {
		return nil, fmt.Errorf("intake: stage new: %w", err)
	}
	c := db.Lead.Create().SetFirstName(in.FirstName).SetLastName(in.LastName).SetNotes(in.Notes).
		SetAdditionalFields(nonEmpty(nil, in.AdditionalFields)).SetStageID(stage.ID).SetTest(in.Test).
		SetSubmissions(1).SetOrigin(lead.OriginIntake)
	if in.Email != "" {
		c.SetEmail(in.Email).SetEmailKey(emailKey)
	}
	if in.Phone != "" {
		c.SetPhone(in.Phone)
		if phoneKey != "" {
			c.SetPhoneKey(phoneKey)
		}
	}
	if in.Source != "" {
		c.SetSource(lead.Source(in.Source))
	}
	if in.MetaURL != "" {
		c.SetMetaURL(in.MetaURL)
	}
	if p.HasUser() {
		c.SetOwnerID(p.UserID)
	}
	l, err := c.Save(ctx)
	if err != nil {
		return nil, fmt.Errorf("intake: create lead: %w", err)
	}
	return l, nil
}

// merge updates a duplicate: fields the lead lacks are filled (what it has is kept: the broker
// may have corrected it, and a submission must not rewrite a lead), notes are appended under a
// timestamp line, additional fields the lead lacks are added (an existing value is never
// overwritten: the newer answer stays in the submission record), and the submission count goes
// up.
func merge(ctx context.Context, l *ent.Lead, in *Submission, emailKey, phoneKey string, now time.Time) (*ent.Lead, error) {
	u := l.Update().AddSubmissions(1)
	if l.FirstName == "" {
		u.SetFirstName(in.FirstName)
	}
	if l.LastName == "" {
		u.SetLastName(in.LastName)
	}
	if l.Email == nil && in.Email != "" {
		u.SetEmail(in.Email).SetEmailKey(emailKey)
	}
	if l.Phone == nil && in.Phone != "" {
		u.SetPhone(in.Phone)
		if phoneKey != "" {
			u.SetPhoneKey(phoneKey)
		}
	}
	if l.Source == nil && in.Source != "" {
		u.SetSource(lead.Source(in.Source))
	}
	if l.MetaURL == nil && in.MetaURL != "" {
		u.SetMetaURL(in.MetaURL)
	}
	if in.Notes != "" {
		u.SetNotes(appendNote(l.Notes, in.Notes, now))
	}
	if f := addMissing(l.AdditionalFields, in.AdditionalFields); !maps.Equal(f, l.AdditionalFields) {
		u.SetAdditionalFields(f)
	}
	l, err := u.Save(ctx)
	if err != nil {
		return nil, fmt.Errorf("intake: update lead: %w", err)
	}
	return l, nil
}

// nonEmpty is base with the non-empty values of add set over it (a new map).
func nonEmpty(base, add map[string]string) map[string]string {
	out := maps.Clone(base)
	if out == nil {
		out = map[string]string{}
	}
	for k, v := range add {
		if v != "" {
			out[k] = v
		}
	}
	return out
}

// addMissing is base with the non-empty values of add whose names base lacks (a new map).
func addMissing(base, add map[string]string) map[string]string {
	out := maps.Clone(base)
	if out == nil {
		out = map[string]string{}
	}
	for k, v := range add {
		if _, ok := out[k]; !ok && v != "" {
			out[k] = v
		}
	}
	return out
}

// appendNote adds note under a line with the time of the submission (Europe/Berlin).
func appendNote(notes, note string, now time.Time) string {
	entry := "--- " + now.In(httpx.Berlin).Format("2006-01-02 15:04:05 -07:00") + " ---\n" + note
	if notes == "" {
		return entry
	}
	return notes + "\n\n" + entry
}

// attach stores files on the lead and returns all its attachments (without content).
func attach(ctx context.Context, db *ent.Client, leadID uuid.UUID, files []File, now time.Time) ([]*ent.LeadAttachment, error) {
	if len(files) > 0 {
		bs := make([]*ent.LeadAttachmentCreate, len(files))
		for i, f := range files {
			bs[i] = db.LeadAttachment.Create().SetLeadID(leadID).SetFilename(f.Filename).
				SetContentType(f.ContentType).SetSize(int64(len(f.Content))).SetContent(f.Content).SetCreatedAt(now)
		}
		if err := db.LeadAttachment.CreateBulk(bs...).Exec(ctx); err != nil {
			return nil, fmt.Errorf("intake: attachments of lead %s: %w", leadID, err)
		}
	}
	atts, err := db.LeadAttachment.Query().Where(leadattachment.LeadID(leadID)).
		Order(leadattachment.ByCreatedAt(), leadattachment.ByID()).
		Select(leadattachment.FieldID, leadattachment.FieldLeadID, leadattachment.FieldFilename,
			leadattachment.FieldContentType, leadattachment.FieldSize, leadattachment.FieldCreatedAt).
		All(ctx)
	if err != nil {
		return nil, fmt.Errorf("intake: attachments of lead %s: %w", leadID, err)
	}
	return atts, nil
}

// payload is the submission as the service understood it, kept on LeadSubmission.
func (in *Submission) payload() map[string]any {
	m := map[string]any{"firstName": in.FirstName, "lastName": in.LastName, "test": in.Test}
	for k, v := range map[string]string{"email": in.Email, "phone": in.Phone, "notes": in.Notes,
		"source": in.Source, "ignoredSource": in.IgnoredSource, "metaUrl": in.MetaURL, "redirect": in.Redirect} {
		if v != "" {
			m[k] = v
		}
	}
	if len(in.AdditionalFields) > 0 {
		m["additionalFields"] = in.AdditionalFields
	}
	if len(in.Files) > 0 {
		files := make([]map[string]any, len(in.Files))
		for i, f := range in.Files {
			files[i] = map[string]any{"field": f.Field, "filename": f.Filename, "contentType": f.ContentType,
				"declaredContentType": f.DeclaredType, "size": len(f.Content)}
		}
		m["attachments"] = files
	}
	return m
}
