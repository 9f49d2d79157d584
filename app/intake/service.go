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
	"github.com/brokerdesk/brokerdesk/app/httpx"
	"github.com/brokerdesk/brokerdesk/app/leads"
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
// oldest open (not converted) lead of the same test flag that matches by normalised e-mail
// (preferred) or phone, as the company's lead_rules enable them, or creates a lead in stage
// new owned by the key's user. Every submission is kept as a LeadSubmission, files as
// LeadAttachments, and lead.created or lead.updated is recorded.
//
// Concurrent submissions of one person are serialised before the lookup by transaction-level
// advisory locks on the company and each identity key, taken in ascending order (so two
// submissions sharing both keys cannot deadlock): the second waits for the first to commit and
// then finds its lead. The matched lead is also locked FOR UPDATE, so a submission matching it
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
	var emailKey, phoneKey string
	if in.Email != "" {
		emailKey = leads.EmailKey(in.Email)
	}
	if in.Phone != "" {
		phoneKey, _ = leads.PhoneKey(in.Phone)
	}
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
	l, err := findOpen(ctx, db, in.Test, byEmail, byPhone)
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
		if _, err := db.ExecContext(ctx, "SELECT pg_advisory_xact_lock($1)", id); err != nil {
			return fmt.Errorf("intake: lock identity: %w", err)
		}
	}
	return nil
}

// findOpen returns the lead a submission merges into, locked, or nil.
func findOpen(ctx context.Context, db *ent.Client, test bool, email, phone string) (*ent.Lead, error) {
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
	cands, err := db.Lead.Query().Where(lead.Converted(false), lead.Test(test), lead.Or(or...)).
		Order(lead.ByCreatedAt(), lead.ByID()).ForUpdate().All(ctx)
	if err != nil {
		return nil, fmt.Errorf("intake: find duplicate: %w", err)
	}
	for _, c := range cands {
		if email != "" && c.EmailKey != nil && *c.EmailKey == email {
			return c, nil
		}
	}
	if len(cands) > 0 {
		return cands[0], nil
	}
	return nil, nil
}

func (s *Service) create(ctx context.Context, db *ent.Client, p *tenancy.Principal, in *Submission, emailKey, phoneKey string) (*ent.Lead, error) {
	stage, err := db.LeadStage.Query().Where(leadstage.Key("new")).Only(ctx)
	if err != nil {
		return nil, fmt.Errorf("intake: stage new: %w", err)
	}
	c := db.Lead.Create().SetFirstName(in.FirstName).SetLastName(in.LastName).SetNotes(in.Notes).
		SetAdditionalFields(nonEmpty(nil, in.AdditionalFields)).SetStageID(stage.ID).SetTest(in.Test).
		SetSubmissions(1)
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
// may have corrected it), notes are appended under a timestamp line, additional fields are
// merged name by name (the newer answer wins), and the submission count goes up.
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
	if f := nonEmpty(l.AdditionalFields, in.AdditionalFields); !maps.Equal(f, l.AdditionalFields) {
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
			files[i] = map[string]any{"field": f.Field, "filename": f.Filename, "contentType": f.ContentType, "size": len(f.Content)}
		}
		m["attachments"] = files
	}
	return m
}
