package signatures

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"gocloud.dev/blob"

	"github.com/brokerdesk/brokerdesk/app/emails"
	"github.com/brokerdesk/brokerdesk/app/platform/blobstore"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/pdf"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
	"github.com/brokerdesk/brokerdesk/ent/signaturerequest"
	"github.com/brokerdesk/brokerdesk/ent/signaturesigner"
	"github.com/brokerdesk/brokerdesk/ent/user"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// BlobPrefix is where the merged source PDFs live in the bucket: <prefix>/<company>/….
const BlobPrefix = "signatures"

// The 409 codes of the request's states.
const (
	codeNotPending   = "request_not_pending" // cancel or remind of a request no longer out for signature
	codeRemindTooSon = "remind_too_soon"     // every pending signer was mailed within the hour
)

// RemindEvery is how often a signer may be mailed their link: at most once an hour (issue 22).
const RemindEvery = time.Hour

// Get reads one request with its signers. Another company's, or one of a contact the caller
// may not see, is not found. A pending request past its expiry is expired first.
func (s *Service) Get(ctx context.Context, id uuid.UUID) (View, error) {
	r, err := tenancy.Client(ctx).SignatureRequest.Get(ctx, id)
	if err != nil {
		return View{}, errs.FromEnt(err, "signature request %s", id)
	}
	if r, err = s.m.expireDue(ctx, r); err != nil {
		return View{}, err
	}
	return load(ctx, r)
}

// lock reads one request and locks its row to the end of the transaction: a cancel or remind
// racing the last signature (which locks it too) is one or the other, never both.
func (s *Service) lock(ctx context.Context, id uuid.UUID) (*ent.SignatureRequest, error) {
	r, err := tenancy.Client(ctx).SignatureRequest.Query().Where(signaturerequest.ID(id)).ForUpdate().Only(ctx)
	if err != nil {
		return nil, errs.FromEnt(err, "signature request %s", id)
	}
	return s.m.expireDue(ctx, r)
}

// Create checks in against the company's data, merges its documents into the PDF the signers
// see, stores the request with its signers and has the provider invite them (the built-in
// provider mails each a personal link), all in the request's transaction: a failure anywhere
// leaves no request, no signer, no mail and (removed on rollback) no blob.
func (s *Service) Create(ctx context.Context, in CreateInput) (View, error) {
	m := s.m
	company, ok := tenancy.CompanyID(ctx)
	if !ok {
		return View{}, tenancy.ErrNoCompany
	}
	db := tenancy.Client(ctx)
	now := m.d.Now()
	var v errs.Invalid

	name := DefaultProvider
	if in.Provider != nil {
		name = *in.Provider
	}
	prov, ok := m.provider(name)
	if !ok {
		v.Add("provider", "unknown_provider", "must be one of "+strings.Join(m.providerNames(), ", "))
	} else if in.fields != nil && !prov.Capabilities().ExplicitFields {
		v.Add("fields", "fields_not_supported", "provider "+name+" places no explicit fields: leave fields out")
	}
	expires := now.Add(DefaultExpiry)
	if in.expiresAt != nil {
		expires = *in.expiresAt
		v.Check("expiresAt", expires.After(now), "not_in_future", "must be in the future")
		v.Check("expiresAt", !expires.After(now.Add(MaxExpiry)), "too_late", "must be at most 90 days ahead")
	}

	ct, err := db.Contact.Get(ctx, in.contactID)
	if ent.IsNotFound(err) {
		v.Add("contactId", "unknown_contact", "is not a contact of this company you may see")
		return View{}, v.Err()
	}
	if err != nil {
		return View{}, fmt.Errorf("read contact %s: %w", in.contactID, err)
	}
	signers, err := resolveSigners(ctx, &v, ct, in.signers)
	if err != nil {
		return View{}, err
	}
	mb, err := resolveMailbox(ctx, in.mailboxID)
	if err != nil {
		return View{}, err
	}
	if mb == nil {
		if in.mailboxID != nil {
			v.Add("mailboxId", "unknown_mailbox", "is not a mailbox you may send from (see GET /mailboxes)")
		} else {
			v.Add("mailboxId", "mailbox_required", "you have no personal mailbox and the company no shared one: name a mailboxId")
		}
	}
	srcs, err := readSources(ctx, m, &v, ct.ID, in.sources)
	if err != nil {
		return View{}, err
	}
	if err := v.Err(); err != nil {
		return View{}, err
	}

	merged, pages, err := merge(srcs)
	if err != nil {
		return View{}, err
	}
	fields := in.fields
	if fields == nil {
		fields = taggedFields(srcs, signers)
	}
	for i, f := range fields {
		v.Check(fmt.Sprintf("fields.%d.page", i), f.Page <= pages, "out_of_range",
			fmt.Sprintf("the documents have %d pages", pages))
		fields[i].Role = signers[f.Signer].role
	}
	if err := v.Err(); err != nil {
		return View{}, err
	}
	title := srcs[0].filename
	title = strings.TrimSuffix(strings.TrimSuffix(title, ".pdf"), ".PDF")
	if r := []rune(title); len(r) > MaxTitle {
		title = string(r[:MaxTitle])
	}
	if strings.TrimSpace(title) == "" {
		title = "Dokument"
	}
	if in.Title != nil {
		title = *in.Title
	}
	message := ""
	if in.Message != nil {
		message = strings.TrimSpace(*in.Message)
	}

	// The blob first, removed again when the transaction rolls back (as documents.Service.Create
	// does): a row never names a missing blob.
	key := blobstore.NewKey(BlobPrefix, company)
	if err := m.d.Bucket.WriteAll(ctx, key, merged, &blob.WriterOptions{ContentType: "application/pdf"}); err != nil {
		return View{}, blobstore.WriteFailed(ctx, "signature source", err)
	}
	if err := tenancy.AfterRollback(ctx, func() { m.removeBlob(ctx, key) }); err != nil {
		m.removeBlob(ctx, key)
		return View{}, err
	}
	sum := sha256.Sum256(merged)
	docs := make([]schematype.SignatureSource, len(srcs))
	for i, s := range srcs {
		docs[i] = s.ref
	}
	r, err := db.SignatureRequest.Create().SetContactID(ct.ID).SetProvider(prov.Name()).SetTitle(title).
		SetMessage(message).SetDocuments(docs).SetFields(fields).SetSourceBlobKey(key).
		SetSourceSha256(hex.EncodeToString(sum[:])).SetPageCount(pages).SetMailboxID(mb.ID).
		SetExpiresAt(expires).SetNillableCreatorID(tenancy.ActingUser(ctx)).Save(ctx)
	if err != nil {
		return View{}, fmt.Errorf("create signature request: %w", err)
	}
	builders := make([]*ent.SignatureSignerCreate, len(signers))
	for i, sg := range signers {
		// The id first: the link's token is made from it, and the row keeps the token's hash.
		id, err := uuid.NewV7()
		if err != nil {
			return View{}, fmt.Errorf("signer id: %w", err)
		}
		builders[i] = db.SignatureSigner.Create().SetID(id).SetRequestID(r.ID).SetContactID(ct.ID).SetPosition(i).
			SetRole(signaturesigner.Role(sg.role)).SetNillableUserID(sg.userID).SetName(sg.name).SetEmail(sg.email).
			SetTokenHash(tokenHash(m.linkToken(company, id)))
	}
	rows, err := db.SignatureSigner.CreateBulk(builders...).Save(ctx)
	if err != nil {
		return View{}, fmt.Errorf("create signers of signature request %s: %w", r.ID, err)
	}
	if err := m.scheduleExpiry(ctx, company, r); err != nil {
		return View{}, err
	}
	if err := prov.Invite(ctx, r, rows, false); err != nil {
		return View{}, err
	}
	if err := m.recordEvent(ctx, "signature_request.created", r); err != nil {
		return View{}, err
	}
	return load(ctx, r)
}

// signer is a resolved signer: who signs, with name and address.
type signer struct {
	role        string
	name, email string
	userID      *uuid.UUID
}

// resolveSigners fills the name and address of contact and broker signers from their records
// and adds what is wrong to v: a contact without e-mail (contact_without_email), a broker who is
// no active user of the company, a broker signer without userId from a key without user, and
// two signers with one address (one person signs once; each link opens one signer).
func resolveSigners(ctx context.Context, v *errs.Invalid, ct *ent.Contact, in []signerIn) ([]signer, error) {
	out := make([]signer, len(in))
	seen := map[string]int{}
	for i, s := range in {
		field := fmt.Sprintf("signers.%d", i)
		sg := signer{role: s.role, name: s.name, email: s.email}
		switch s.role {
		case "contact":
			sg.name = contactName(ct)
			if ct.Email == nil || strings.TrimSpace(*ct.Email) == "" {
				v.Add(field, "contact_without_email", "the contact has no e-mail address to send the link to")
			} else {
				sg.email = strings.TrimSpace(*ct.Email)
			}
		case "broker":
			id := s.userID
			if id == nil {
				id = tenancy.ActingUser(ctx)
			}
			if id == nil {
				v.Add(field+".userId", "required", "a company-level key has no user: name the broker's userId")
				break
			}
			u, err := tenancy.Client(ctx).User.Query().Where(user.ID(*id), user.StatusEQ(user.StatusActive)).Only(ctx)
			if ent.IsNotFound(err) {
				v.Add(field+".userId", "unknown_user", "is not an active user of this company")
				break
			}
			if err != nil {
				return nil, fmt.Errorf("read user %s: %w", *id, err)
			}
			sg.userID, sg.email = &u.ID, u.Email
			sg.name = strings.TrimSpace(u.FirstName + " " + u.LastName)
			if sg.name == "" {
				sg.name = u.Email
			}
		}
		if sg.email != "" {
			k := strings.ToLower(sg.email)
			if j, dup := seen[k]; dup {
				v.Add(field, "duplicate_signer", fmt.Sprintf("has the e-mail address of signer %d: a person signs once", j))
			} else {
				seen[k] = i
			}
		}
		if r := []rune(sg.name); len(r) > MaxSignerName {
			sg.name = string(r[:MaxSignerName])
		}
		out[i] = sg
	}
	return out, nil
}

// contactName is how the contact is addressed: the person's name, else the business's.
func contactName(ct *ent.Contact) string {
	if n := strings.TrimSpace(ct.FirstName + " " + ct.LastName); n != "" {
		return n
	}
	if n := strings.TrimSpace(ct.CompanyName); n != "" {
		return n
	}
	return "Kundin/Kunde"
}

// resolveMailbox is the mailbox the links are sent from, as the caller sees mailboxes: the one
// named (nil when it is none the caller may send from), else the caller's personal mailbox,
// else the company's first shared one by address; nil when there is none.
func resolveMailbox(ctx context.Context, id *uuid.UUID) (*ent.Mailbox, error) {
	db := tenancy.Client(ctx)
	if id != nil {
		mb, err := db.Mailbox.Get(ctx, *id)
		if ent.IsNotFound(err) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read mailbox %s: %w", *id, err)
		}
		return mb, nil
	}
	return emails.SenderMailbox(ctx)
}

// src is one document of a request, read and checked.
type src struct {
	ref      schematype.SignatureSource
	filename string
	content  []byte
	pages    int
	fields   []schematype.SignatureField // tagged fields of the document (generated or standard)
}

// readSources reads the documents of a request as the caller sees them and checks each with
// pdf.Inspect, adding to v what is wrong: a document that is not one of the contact's (or not
// visible), not a PDF, a standard document the company does not have, and what Inspect refuses
// (encrypted, JavaScript, not a PDF); beyond the totals (MaxTotalBytes, MaxTotalPages) the
// document that crosses them is named (too_large, too_many_pages). The sizes in the rows are
// checked before any content is read, so a request for 500 MB reads nothing.
func readSources(ctx context.Context, m *Module, v *errs.Invalid, contact uuid.UUID, in []source) ([]src, error) {
	db := tenancy.Client(ctx)
	out := make([]src, len(in))
	var total int64
	for i, s := range in {
		field := fmt.Sprintf("documents.%d", i)
		if s.document != nil {
			field += ".documentId"
			d, err := db.Document.Get(ctx, *s.document)
			switch {
			case ent.IsNotFound(err) || err == nil && d.ContactID != contact:
				v.Add(field, "unknown_document", "is not a document of contact "+contact.String())
				continue
			case err != nil:
				return nil, fmt.Errorf("read document %s: %w", *s.document, err)
			case !strings.HasPrefix(d.ContentType, "application/pdf"):
				v.Add(field, "not_pdf", "is "+d.ContentType+", not a PDF: only PDFs can be signed")
				continue
			}
			total += d.Size
			if total > MaxTotalBytes {
				v.Add(field, "too_large", fmt.Sprintf("the documents have more than %d bytes (50 MB) together", MaxTotalBytes))
				return out, nil
			}
			id := d.ID
			out[i] = src{ref: schematype.SignatureSource{DocumentID: &id, Filename: d.Filename}, filename: d.Filename,
				fields: d.SignatureFields}
			rc, err := m.d.Docs.Open(ctx, d)
			if err != nil {
				return nil, err
			}
			out[i].content, err = io.ReadAll(rc)
			_ = rc.Close()
			if err != nil {
				return nil, fmt.Errorf("read content of document %s: %w", d.ID, err)
			}
		} else {
			field += ".standardDocumentId"
			d, err := db.StandardDocument.Get(ctx, *s.standard)
			if ent.IsNotFound(err) {
				v.Add(field, "unknown_standard_document", "is not a standard document of this company (see GET /standard-documents)")
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("read standard document %s: %w", *s.standard, err)
			}
			total += d.Size
			if total > MaxTotalBytes {
				v.Add(field, "too_large", fmt.Sprintf("the documents have more than %d bytes (50 MB) together", MaxTotalBytes))
				return out, nil
			}
			id := d.ID
			out[i] = src{ref: schematype.SignatureSource{StandardDocumentID: &id, Filename: d.Filename},
				filename: d.Filename, content: d.Content, fields: d.SignatureFields}
		}
	}
	if len(v.Errors) > 0 {
		return out, nil
	}
	pages := 0
	for i := range out {
		field := fmt.Sprintf("documents.%d", i)
		if out[i].ref.DocumentID != nil {
			field += ".documentId"
		} else {
			field += ".standardDocumentId"
		}
		info, err := pdf.Inspect(out[i].content, pdf.Limits{MaxBytes: MaxTotalBytes, MaxPages: MaxTotalPages - pages})
		var refused *pdf.RefusedError
		if errors.As(err, &refused) {
			v.Add(field, refused.Code, refused.Reason)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("inspect %s: %w", field, err)
		}
		out[i].pages = info.Pages
		out[i].ref.Pages = info.Pages
		pages += info.Pages
	}
	return out, nil
}

// merge is the one PDF the signers see and its page count.
func merge(srcs []src) ([]byte, int, error) {
	pages := 0
	for _, s := range srcs {
		pages += s.pages
	}
	if len(srcs) == 1 {
		return srcs[0].content, pages, nil
	}
	docs := make([][]byte, len(srcs))
	for i, s := range srcs {
		docs[i] = s.content
	}
	out, err := pdf.Merge(docs)
	if err != nil {
		return nil, 0, fmt.Errorf("merge the documents of a signature request: %w", err)
	}
	return out, pages, nil
}

// taggedFields are the signature fields the documents carry (a generated document's template,
// a standard document's), moved to the merged PDF's pages and given to the first signer of the
// field's role; a field whose role no signer has is left out (that signer signs on the audit
// page only, as does a signer without any field).
func taggedFields(srcs []src, signers []signer) []schematype.SignatureField {
	out := []schematype.SignatureField{}
	offset := 0
	for _, s := range srcs {
		for _, f := range s.fields {
			i := slices.IndexFunc(signers, func(sg signer) bool { return sg.role == f.Role })
			if i < 0 || f.Page < 1 || f.Page > s.pages {
				continue
			}
			f.Signer, f.Page = i, f.Page+offset
			out = append(out, f)
		}
		offset += s.pages
	}
	return out
}

// removeBlob removes a merged PDF whose request was not stored; a failure leaves an orphan
// blob, logged.
func (m *Module) removeBlob(ctx context.Context, key string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := m.d.Bucket.Delete(ctx, key); err != nil {
		m.d.Log.Warn().Err(err).Str("blob_key", key).Msg("remove blob of a signature request not stored")
	}
}

// Cancel ends pending request id: its links stop working (the page checks the status),
// cancelled_at is set, signature_request.cancelled recorded. Any other status is 409 naming it.
func (s *Service) Cancel(ctx context.Context, id uuid.UUID) (View, error) {
	r, err := s.lock(ctx, id)
	if err != nil {
		return View{}, err
	}
	if r.Status != signaturerequest.StatusPending {
		return View{}, errs.Conflict(codeNotPending, "signature request %s is %s: only a pending request can be cancelled", r.ID, r.Status)
	}
	r, err = tenancy.Client(ctx).SignatureRequest.UpdateOne(r).SetStatus(signaturerequest.StatusCancelled).
		SetCancelledAt(s.m.d.Now()).Save(ctx)
	if err != nil {
		return View{}, fmt.Errorf("cancel signature request %s: %w", id, err)
	}
	if err := s.m.recordEvent(ctx, "signature_request.cancelled", r); err != nil {
		return View{}, err
	}
	return load(ctx, r)
}

// Reminded is the answer of POST …/remind: the signers mailed their link again.
type Reminded struct {
	Reminded []uuid.UUID `json:"reminded"`
}

// TooSoonError is a remind that finds no signer to remind yet: Wait is how long until the
// first can be (the handler's Retry-After).
type TooSoonError struct {
	*errs.E
	Wait time.Duration
}

// Unwrap is the problem's kind (409).
func (e *TooSoonError) Unwrap() error { return e.E }

// Remind mails the pending signers of pending request id their link again (the same link: the
// token is deterministic), each at most once per RemindEvery since they were last mailed
// (invited or reminded). 409 when the request is not pending, or when no signer may be
// reminded yet (*TooSoonError, code remind_too_soon).
func (s *Service) Remind(ctx context.Context, id uuid.UUID) (Reminded, error) {
	r, err := s.lock(ctx, id)
	if err != nil {
		return Reminded{}, err
	}
	if r.Status != signaturerequest.StatusPending {
		return Reminded{}, errs.Conflict(codeNotPending, "signature request %s is %s: only a pending request's signers are reminded", r.ID, r.Status)
	}
	ss, err := loadSigners(ctx, r)
	if err != nil {
		return Reminded{}, err
	}
	now := s.m.d.Now()
	var due []*ent.SignatureSigner
	var wait time.Duration = -1
	for _, sg := range ss {
		if sg.Status != signaturesigner.StatusPending {
			continue
		}
		last := lastMailed(sg)
		if last == nil || !now.Before(last.Add(RemindEvery)) {
			due = append(due, sg)
			continue
		}
		if w := last.Add(RemindEvery).Sub(now); wait < 0 || w < wait {
			wait = w
		}
	}
	if len(due) == 0 {
		if wait < 0 {
			wait = RemindEvery // no pending signer: the request is completing; try later
		}
		return Reminded{}, &TooSoonError{E: errs.Conflict(codeRemindTooSon,
			"every pending signer of signature request %s was mailed within the last hour; retry in %d seconds",
			r.ID, int64(wait.Round(time.Second).Seconds())).(*errs.E), Wait: wait}
	}
	prov, ok := s.m.provider(r.Provider)
	if !ok {
		return Reminded{}, fmt.Errorf("signature request %s: provider %q not configured", r.ID, r.Provider)
	}
	if err := prov.Invite(ctx, r, due, true); err != nil {
		return Reminded{}, err
	}
	out := Reminded{Reminded: make([]uuid.UUID, len(due))}
	for i, sg := range due {
		out.Reminded[i] = sg.ID
	}
	return out, nil
}

// lastMailed is when a signer was last sent their link.
func lastMailed(sg *ent.SignatureSigner) *time.Time {
	last := sg.NotifiedAt
	if sg.RemindedAt != nil && (last == nil || sg.RemindedAt.After(*last)) {
		last = sg.RemindedAt
	}
	return last
}
