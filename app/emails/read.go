package emails

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	entsql "entgo.io/ent/dialect/sql"
	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/rs/zerolog"
	"gocloud.dev/gcerrors"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/app/platform/paging"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/contact"
	"github.com/brokerdesk/brokerdesk/ent/email"
	"github.com/brokerdesk/brokerdesk/ent/emailattachment"
	"github.com/brokerdesk/brokerdesk/ent/emaillink"
	"github.com/brokerdesk/brokerdesk/ent/emailthread"
	"github.com/brokerdesk/brokerdesk/ent/lead"
	"github.com/brokerdesk/brokerdesk/ent/mailbox"
	"github.com/brokerdesk/brokerdesk/policy"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// Bounds of GET /email-threads?q=.
const (
	minSearch = 2
	maxSearch = 200
)

// maxAttachmentRead bounds what one attachment download reads into memory: a message's
// attachments are at most 25 MB together (what sending allows; the sync stores no more).
const maxAttachmentRead = 32 << 20

// mountRead registers GET /email-threads, /email-threads/{id}, /emails/{id} and the
// attachment content (scope emails:read, feature emails).
func (h *Handler) mountRead(r fiber.Router) {
	r.Get("/email-threads", policy.Require("emails:read"), h.listThreads)
	r.Get("/email-threads/:threadId", policy.Require("emails:read"), h.getThread)
	r.Get("/emails/:emailId", policy.Require("emails:read"), h.getEmail)
	r.Get("/emails/:emailId/attachments/:attachmentId/content", policy.Require("emails:read"), h.attachmentContent)
}

// Thread is a thread with the links of its messages the caller may see.
type Thread struct {
	Thread *ent.EmailThread
	Links  []*ent.EmailLink
}

// ThreadDetail is a thread with its messages, oldest first.
type ThreadDetail struct {
	Thread
	Messages []Loaded
}

// ThreadView is the EmailThread resource.
type ThreadView struct {
	ID            uuid.UUID   `json:"id"`
	MailboxID     uuid.UUID   `json:"mailboxId"`
	Subject       string      `json:"subject"`
	LastMessageAt time.Time   `json:"lastMessageAt"`
	MessageCount  int         `json:"messageCount"`
	ContactIDs    []uuid.UUID `json:"contactIds"`
	LeadIDs       []uuid.UUID `json:"leadIds"`
	CreatedAt     time.Time   `json:"createdAt"`
	UpdatedAt     time.Time   `json:"updatedAt"`
}

// ThreadDetailView is GET /email-threads/{threadId}: the thread and its messages.
type ThreadDetailView struct {
	ThreadView
	Messages []View `json:"messages"`
}

// NewThreadView is the EmailThread resource of t: each linked contact and lead once.
func NewThreadView(t Thread) ThreadView {
	v := ThreadView{ID: t.Thread.ID, MailboxID: t.Thread.MailboxID, Subject: t.Thread.Subject,
		LastMessageAt: t.Thread.LastMessageAt, MessageCount: t.Thread.MessageCount,
		ContactIDs: []uuid.UUID{}, LeadIDs: []uuid.UUID{}, CreatedAt: t.Thread.CreatedAt, UpdatedAt: t.Thread.UpdatedAt}
	for _, l := range t.Links {
		if l.ContactID != nil && !slices.Contains(v.ContactIDs, *l.ContactID) {
			v.ContactIDs = append(v.ContactIDs, *l.ContactID)
		}
		if l.LeadID != nil && !slices.Contains(v.LeadIDs, *l.LeadID) {
			v.LeadIDs = append(v.LeadIDs, *l.LeadID)
		}
	}
	return v
}

// NewThreadDetailView is the thread with its messages in body variant body.
func NewThreadDetailView(d ThreadDetail, body string) ThreadDetailView {
	v := ThreadDetailView{ThreadView: NewThreadView(d.Thread), Messages: make([]View, len(d.Messages))}
	for i, m := range d.Messages {
		v.Messages[i] = NewView(m, body)
	}
	return v
}

// ThreadFilter narrows GET /email-threads. Nil fields do not filter; Search is the q
// parameter in lower case.
type ThreadFilter struct {
	UpdatedSince *time.Time
	ContactID    *uuid.UUID
	LeadID       *uuid.UUID
	MailboxID    *uuid.UUID
	Search       *string
}

// threadsLatestFirst orders GET /email-threads: latest message first, then id (index
// company_id, last_message_at, id).
var threadsLatestFirst = paging.Keyset[Thread]{Column: emailthread.FieldLastMessageAt, Kind: paging.Time, Desc: true,
	Value: func(t Thread) (any, uuid.UUID) { return t.Thread.LastMessageAt, t.Thread.ID }}

// ListThreads returns a page of the threads matching f that ctx may see, latest message
// first, each with its visible links.
func (s *Service) ListThreads(ctx context.Context, f ThreadFilter, page paging.Page) ([]Thread, error) {
	k, err := threadsLatestFirst.Apply(page)
	if err != nil {
		return nil, err
	}
	db := tenancy.Client(ctx)
	q := db.EmailThread.Query()
	q.Where(paging.If(f.UpdatedSince, emailthread.UpdatedAtGTE)...)
	q.Where(paging.If(f.MailboxID, emailthread.MailboxID)...)
	// The contact or lead filtered by must be one the caller sees, through the ent rules as
	// well as row-level security: the links subquery below is raw SQL, which only the policies
	// narrow, so without this a gap in them would let a thread be found by a contact the caller
	// may not see.
	if f.ContactID != nil {
		ok, err := db.Contact.Query().Where(contact.ID(*f.ContactID)).Exist(ctx)
		if err != nil || !ok {
			return nil, err
		}
		q.Where(linkedTo(emaillink.FieldContactID, *f.ContactID))
	}
	if f.LeadID != nil {
		ok, err := db.Lead.Query().Where(lead.ID(*f.LeadID)).Exist(ctx)
		if err != nil || !ok {
			return nil, err
		}
		q.Where(linkedTo(emaillink.FieldLeadID, *f.LeadID))
	}
	// No JIT for this statement: the visibility subplans' cost estimates cross jit_above_cost,
	// and compiling took a second of an agent's 1.4 s (docs/perf-notes/2026-12-07-email.md).
	if err := tenancy.WithoutJIT(ctx); err != nil {
		return nil, fmt.Errorf("list email threads: %w", err)
	}
	if f.Search != nil {
		common, err := commonTerm(ctx, *f.Search)
		if err != nil {
			return nil, err
		}
		q.Where(searchThreads(*f.Search, common))
	}
	rows, err := q.Where(k.Where).Order(k.Order).Limit(k.Limit).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("list email threads: %w", err)
	}
	ids := make([]uuid.UUID, len(rows))
	for i, t := range rows {
		ids[i] = t.ID
	}
	links, err := db.EmailLink.Query().Where(emaillink.ThreadIDIn(ids...)).Order(ent.Asc(emaillink.FieldCreatedAt), ent.Asc(emaillink.FieldID)).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("links of email threads: %w", err)
	}
	out := make([]Thread, len(rows))
	for i, t := range rows {
		out[i] = Thread{Thread: t}
		for _, l := range links {
			if l.ThreadID == t.ID {
				out[i].Links = append(out[i].Links, l)
			}
		}
	}
	return out, nil
}

// linkedTo: threads with a message linked to id (column col of email_links: contact_id or
// lead_id). Row-level security narrows the subquery to the links the caller may see, so a
// thread linked only to someone else's contact is not found by that contact's id.
func linkedTo(col string, id uuid.UUID) func(*entsql.Selector) {
	return func(s *entsql.Selector) {
		l := entsql.Table(emaillink.Table)
		s.Where(entsql.In(s.C(emailthread.FieldID),
			entsql.Select(l.C(emaillink.FieldThreadID)).From(l).Where(entsql.EQ(l.C(col), id))))
	}
}

// commonLimit is how many visible matching messages make a search term common.
const commonLimit = 500

// commonTerm reports whether at least commonLimit messages the caller may see contain needle
// (1–3 ms: the trigram index, at most commonLimit policy checks).
func commonTerm(ctx context.Context, needle string) (bool, error) {
	rows, err := tenancy.Client(ctx).QueryContext(ctx, `SELECT count(*) FROM (SELECT 1 FROM `+email.Table+` e WHERE e.`+
		email.FieldSearchText+` LIKE $1 ESCAPE '\' LIMIT `+strconv.Itoa(commonLimit)+`) s`, likePattern(needle))
	if err != nil {
		return false, fmt.Errorf("count search matches: %w", err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		if err := rows.Scan(&n); err != nil {
			return false, fmt.Errorf("count search matches: %w", err)
		}
	}
	return n >= commonLimit, rows.Err()
}

// searchThreads: a message of the thread whose search_text (subject, addresses and text in
// lower case) contains needle, under the same row-level security as the threads. One pattern
// argument, LIKE's wildcards escaped. A rare term goes through the trigram index
// tenant_emails_search (a semi join over its few matches); a common one is probed per thread
// walked instead (the thread's messages by index; "|| ”" keeps the probe off the trigram
// index, OFFSET 0 keeps it a per-row subplan), so it costs the threads of the page, not the
// term's ten thousand matches (docs/perf-notes/2026-12-07-email.md).
func searchThreads(needle string, common bool) func(*entsql.Selector) {
	pattern := likePattern(needle)
	return func(s *entsql.Selector) {
		s.Where(entsql.P(func(b *entsql.Builder) {
			b.WriteString("EXISTS (SELECT 1 FROM " + email.Table + " e WHERE e." + email.FieldThreadID + " = " + s.C(emailthread.FieldID))
			if common {
				b.WriteString(" AND e.company_id = " + s.C(emailthread.FieldCompanyID) + " AND (e." + email.FieldSearchText + " || '') LIKE ")
				b.Arg(pattern)
				b.WriteString(` ESCAPE '\' OFFSET 0)`)
				return
			}
			b.WriteString(" AND e." + email.FieldSearchText + " LIKE ")
			b.Arg(pattern)
			b.WriteString(` ESCAPE '\')`)
		}))
	}
}

func likePattern(needle string) string { return "%" + likeEscaper.Replace(needle) + "%" }

var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// GetThread reads a thread ctx may see with its visible links and its messages, oldest first
// (by sentAt; a message not sent yet by when it was created).
func (s *Service) GetThread(ctx context.Context, id uuid.UUID) (ThreadDetail, error) {
	db := tenancy.Client(ctx)
	t, err := db.EmailThread.Get(ctx, id)
	if err != nil {
		return ThreadDetail{}, errs.FromEnt(err, "email thread %s", id)
	}
	msgs, err := db.Email.Query().Where(email.ThreadID(id)).Order(func(s *entsql.Selector) {
		// By the second of sending, then by when we stored it (ids are UUIDv7): a Date header
		// has whole seconds, our sent_at does not, so a reply sent within the same second as
		// the message it answers would otherwise list before it.
		s.OrderExpr(entsql.Expr("date_trunc('second', COALESCE(" + s.C(email.FieldSentAt) + ", " + s.C(email.FieldCreatedAt) + "))"))
		s.OrderBy(s.C(email.FieldID))
	}).All(ctx)
	if err != nil {
		return ThreadDetail{}, fmt.Errorf("messages of email thread %s: %w", id, err)
	}
	loaded, err := s.load(ctx, msgs)
	if err != nil {
		return ThreadDetail{}, err
	}
	d := ThreadDetail{Thread: Thread{Thread: t}, Messages: loaded}
	for _, m := range loaded {
		d.Links = append(d.Links, m.Links...)
	}
	return d, nil
}

// GetEmail reads a message ctx may see (as visible as its thread) with its attachments, its
// visible links and its mailbox.
func (s *Service) GetEmail(ctx context.Context, id uuid.UUID) (Loaded, error) {
	e, err := tenancy.Client(ctx).Email.Get(ctx, id)
	if err != nil {
		return Loaded{}, errs.FromEnt(err, "email %s", id)
	}
	l, err := s.load(ctx, []*ent.Email{e})
	if err != nil {
		return Loaded{}, err
	}
	return l[0], nil
}

// load reads the attachments, the visible links and the mailboxes of msgs, three queries for
// all of them, under the caller's visibility (a mailbox the caller does not see stays nil).
func (s *Service) load(ctx context.Context, msgs []*ent.Email) ([]Loaded, error) {
	db := tenancy.Client(ctx)
	ids := make([]uuid.UUID, len(msgs))
	var boxes []uuid.UUID
	for i, e := range msgs {
		ids[i] = e.ID
		if !slices.Contains(boxes, e.MailboxID) {
			boxes = append(boxes, e.MailboxID)
		}
	}
	atts, err := db.EmailAttachment.Query().Where(emailattachment.EmailIDIn(ids...)).
		Order(ent.Asc(emailattachment.FieldCreatedAt), ent.Asc(emailattachment.FieldID)).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("attachments of emails: %w", err)
	}
	links, err := db.EmailLink.Query().Where(emaillink.EmailIDIn(ids...)).
		Order(ent.Asc(emaillink.FieldCreatedAt), ent.Asc(emaillink.FieldID)).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("links of emails: %w", err)
	}
	mbs, err := db.Mailbox.Query().Where(mailbox.IDIn(boxes...)).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("mailboxes of emails: %w", err)
	}
	out := make([]Loaded, len(msgs))
	for i, e := range msgs {
		l := Loaded{Email: e}
		for _, a := range atts {
			if a.EmailID == e.ID {
				l.Attachments = append(l.Attachments, a)
			}
		}
		for _, k := range links {
			if k.EmailID == e.ID {
				l.Links = append(l.Links, k)
			}
		}
		for _, m := range mbs {
			if m.ID == e.MailboxID {
				l.Mailbox = m
			}
		}
		out[i] = l
	}
	return out, nil
}

// Attachment reads attachment id of message emailID (both visible to ctx) and its content
// from blob storage, checked against the stored sha256 when there is one. An attachment of
// another message is not found; content missing from storage or altered is 502, storage not
// answering 503.
func (s *Service) Attachment(ctx context.Context, emailID, id uuid.UUID) (*ent.EmailAttachment, []byte, error) {
	db := tenancy.Client(ctx)
	if _, err := db.Email.Get(ctx, emailID); err != nil {
		return nil, nil, errs.FromEnt(err, "email %s", emailID)
	}
	a, err := db.EmailAttachment.Query().Where(emailattachment.ID(id), emailattachment.EmailID(emailID)).Only(ctx)
	if err != nil {
		return nil, nil, errs.FromEnt(err, "attachment %s of email %s", id, emailID)
	}
	log := zerolog.Ctx(ctx).With().Str("attachment_id", a.ID.String()).Str("blob_key", a.BlobKey).Logger()
	r, err := s.m.d.Bucket.NewReader(ctx, a.BlobKey, nil)
	if err != nil {
		if gcerrors.Code(err) == gcerrors.NotFound {
			log.Error().Msg("email attachment content missing")
			return nil, nil, errs.Storage("content_missing", "the content of attachment %s is missing from storage", a.ID)
		}
		log.Warn().Err(err).Msg("email attachment content unavailable")
		return nil, nil, errs.Unavailable("unavailable", "blob storage does not answer; nothing was sent, retry the request")
	}
	defer r.Close()
	content, err := io.ReadAll(io.LimitReader(r, maxAttachmentRead))
	if err != nil {
		log.Warn().Err(err).Msg("email attachment content unavailable")
		return nil, nil, errs.Unavailable("unavailable", "blob storage does not answer; nothing was sent, retry the request")
	}
	if a.Sha256 != "" {
		sum := sha256.Sum256(content)
		if !strings.EqualFold(hex.EncodeToString(sum[:]), a.Sha256) {
			log.Error().Str("sha256_stored", a.Sha256).Msg("email attachment content corrupted")
			return nil, nil, errs.Storage("content_corrupted", "the stored content of attachment %s does not match its sha256", a.ID)
		}
	}
	return a, content, nil
}

// listThreads handles GET /email-threads: Paged, latest message first.
func (h *Handler) listThreads(c *fiber.Ctx) error {
	return httpx.ServeList(c, h.pager, "email-threads", parseThreadFilter, h.svc.ListThreads, threadsLatestFirst, NewThreadView)
}

// parseThreadFilter reads the query of GET /email-threads; every bad parameter is listed.
func parseThreadFilter(c *fiber.Ctx, v *errs.Invalid) (f ThreadFilter, _ error) {
	f.UpdatedSince = httpx.QueryTime(c, v, "updatedSince")
	f.ContactID = httpx.QueryUUID(c, v, "contactId")
	f.LeadID = httpx.QueryUUID(c, v, "leadId")
	f.MailboxID = httpx.QueryUUID(c, v, "mailboxId")
	// An empty q does not filter (as every other filter); blanks only are too short.
	if raw := c.Query("q"); raw != "" {
		q := strings.Clone(strings.ToLower(strings.TrimSpace(raw)))
		n := utf8.RuneCountInString(q)
		v.Check("q", n >= minSearch, "too_short", fmt.Sprintf("at least %d characters", minSearch))
		v.Check("q", n <= maxSearch, "too_long", fmt.Sprintf("at most %d characters", maxSearch))
		f.Search = &q
	}
	return f, nil
}

// bodyVariant reads ?body= (default text).
func bodyVariant(c *fiber.Ctx, v *errs.Invalid) string {
	if b := httpx.QueryEnum(c, v, "body", BodyVariants); b != nil {
		return *b
	}
	return BodyText
}

// idAndBody reads the id path parameter param and ?body= of a thread's or an e-mail's GET, in
// the order of their answers: 400 (id), then 422 (body).
func idAndBody(c *fiber.Ctx, param string) (uuid.UUID, string, error) {
	id, err := httpx.UUIDParam(c, param)
	if err != nil {
		return uuid.Nil, "", err
	}
	var v errs.Invalid
	body := bodyVariant(c, &v)
	return id, body, v.Err()
}

// getThread handles GET /email-threads/{threadId}: the thread and its messages (body variant
// as ?body= asks, default text). Order of answers: 400 (id), 422 (body), 404.
func (h *Handler) getThread(c *fiber.Ctx) error {
	id, body, err := idAndBody(c, "threadId")
	if err != nil {
		return err
	}
	d, err := h.svc.GetThread(c.UserContext(), id)
	if err != nil {
		return err
	}
	return c.JSON(NewThreadDetailView(d, body))
}

// getEmail handles GET /emails/{emailId}?body=none|text|html: the Email with its version as
// ETag. Order of answers: 400 (id), 422 (body), 404.
func (h *Handler) getEmail(c *fiber.Ctx) error {
	id, body, err := idAndBody(c, "emailId")
	if err != nil {
		return err
	}
	l, err := h.svc.GetEmail(c.UserContext(), id)
	if err != nil {
		return err
	}
	return httpx.OK(c, NewView(l, body), l.Email.Version)
}

// attachmentContent handles GET /emails/{emailId}/attachments/{attachmentId}/content: the
// bytes as a download (attachment, nosniff) with the type we sniffed when the message was
// stored, never the sender's, and only when httpx.ServedType deems it safe.
func (h *Handler) attachmentContent(c *fiber.Ctx) error {
	emailID, err := httpx.UUIDParam(c, "emailId")
	if err != nil {
		return err
	}
	id, err := httpx.UUIDParam(c, "attachmentId")
	if err != nil {
		return err
	}
	a, content, err := h.svc.Attachment(c.UserContext(), emailID, id)
	if err != nil {
		return err
	}
	return httpx.SendFileAs(c, httpx.CleanFilename(a.Filename, "attachment"), a.ContentType, content)
}
