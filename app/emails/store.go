package emails

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gabriel-vasile/mimetype"
	"github.com/google/uuid"
	"gocloud.dev/blob"

	"github.com/brokerdesk/brokerdesk/app/platform/identity"
	"github.com/brokerdesk/brokerdesk/app/platform/mail"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/email"
	"github.com/brokerdesk/brokerdesk/ent/emailattachment"
	"github.com/brokerdesk/brokerdesk/ent/emaillink"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// Blob keys of synced mail: the raw message and each attachment, under the company.
const (
	RawPrefix        = "email-raw"
	AttachmentPrefix = "email-attachments"
)

// Stored is what StoreIncoming did with one message.
type Stored int

// What StoreIncoming did.
const (
	// StoredNew: a new message, filed in its thread.
	StoredNew Stored = iota
	// StoredDuplicate: the mailbox holds a message with this Message-ID already (our own sent
	// mail found in Sent, a re-sync after UIDVALIDITY changed); at most its folder and UID were
	// recorded.
	StoredDuplicate
	// StoredReport: a delivery status notification about one of our messages: that message was
	// marked delivered or failed, and the report filed in its thread.
	StoredReport
)

// Bounds of what one synced message may put in a row.
const (
	// maxMessageID bounds a stored Message-ID (the unique btree index refuses entries of more
	// than about 2.7 kB, which would stop the sync on that message for ever): a longer one is
	// replaced by its hash.
	maxMessageID = 500
	// maxSearchText bounds search_text (the trigram index grows with it); subject and
	// addresses come first, so only the tail of a very long text is not searchable.
	maxSearchText = 64 << 10
	maxError      = 4000
	// maxStoredRefs is how many References (the newest) a message keeps.
	maxStoredRefs = 100
	// futureSlack: a Date further ahead than this is not believed (it would keep its thread on
	// top of the list for ever); the time the message was stored is taken instead.
	futureSlack = 24 * time.Hour
)

// StoreIncoming files one message found over IMAP in folder (INBOX: inbound; any other folder
// the sync reads, the Sent folder: outbound) of mb at uid, in the transaction of ctx. It never
// fails on the message's content: malformed MIME, unknown charsets and missing headers are
// stored as far as they could be read, with the problems in the message's error. It fails only
// when the database or the blob storage does, and then nothing of the message stays but blobs
// under keys the next attempt writes again (both keys derive from mailbox and Message-ID).
//
// Steps: the Message-ID (synthesized from the raw bytes' hash when missing) is looked up in the
// mailbox first: a message held already is not stored again. Otherwise the raw message and the
// attachments (content type sniffed from their bytes, never the sender's) go to the blob store,
// the message joins its thread (threading.go), is linked to the contacts and leads whose
// addresses it carries (link), and an inbound one records email.received. A delivery status
// notification about one of our messages marks that message instead (applyReport).
func (m *Module) StoreIncoming(ctx context.Context, mb *ent.Mailbox, folder string, uid uint32, raw []byte) (Stored, error) {
	db := tenancy.Client(ctx)
	p := mail.Parse(raw)
	problems := p.Problems
	msgID := clean(p.MessageID)
	switch {
	case msgID == "":
		msgID = syntheticID(raw)
		problems = append(problems, "no Message-ID: "+msgID+" was given to it")
	case len(msgID) > maxMessageID:
		msgID = syntheticID([]byte(msgID))
		problems = append(problems, "Message-ID too long: "+msgID+" was given to it")
	}
	inbound := strings.EqualFold(folder, "INBOX")

	held, err := db.Email.Query().Where(email.MailboxID(mb.ID), email.MessageID(msgID)).Only(ctx)
	switch {
	case err == nil:
		if !inbound && held.Folder == "" {
			// our own sent mail, appended to Sent by the send path: note where it lies
			if err := held.Update().SetFolder(folder).SetImapUID(int64(uid)).Exec(ctx); err != nil {
				return 0, fmt.Errorf("record folder of email %s: %w", held.ID, err)
			}
		}
		return StoredDuplicate, nil
	case !ent.IsNotFound(err):
		return 0, fmt.Errorf("email by message id: %w", err)
	}

	now := m.d.Now()
	at := p.Date
	if at.IsZero() || at.After(now.Add(futureSlack)) {
		at = now
	}
	company := mb.CompanyID
	id := uuid.NewSHA1(mb.ID, []byte(msgID)) // stable: a retried batch writes the same blob keys
	rawKey := fmt.Sprintf("%s/%s/%s.eml", RawPrefix, company, id)
	if err := m.d.Bucket.WriteAll(ctx, rawKey, raw, &blob.WriterOptions{ContentType: "message/rfc822"}); err != nil {
		return 0, fmt.Errorf("store raw message %s: %w", id, err)
	}

	// A report about one of our messages belongs in that message's thread.
	var orig *ent.Email
	if p.DSN != nil && p.DSN.OriginalMessageID != "" {
		orig, err = db.Email.Query().Where(email.MailboxID(mb.ID), email.MessageID(clean(p.DSN.OriginalMessageID)),
			email.DirectionEQ(email.DirectionOutbound)).Only(ctx)
		if ent.IsNotFound(err) {
			orig, err = nil, nil
		}
		if err != nil {
			return 0, fmt.Errorf("email a report is about: %w", err)
		}
	}
	refs := cleanAll(p.References)
	if len(refs) > maxStoredRefs {
		refs = refs[len(refs)-maxStoredRefs:]
	}
	subject := clean(p.Subject)
	threadID, err := m.fileInThread(ctx, mb.ID, orig, threadRefs{InReplyTo: clean(p.InReplyTo), References: refs,
		Subject: subject, Inbound: inbound, At: at}, now)
	if err != nil {
		return 0, err
	}

	to, cc := addrs(p.To), addrs(p.Cc)
	var replyTo string
	if len(p.ReplyTo) > 0 {
		replyTo = clean(p.ReplyTo[0].Email)
	}
	c := db.Email.Create().SetID(id).SetThreadID(threadID).SetMailboxID(mb.ID).
		SetMessageID(msgID).SetInReplyTo(clean(p.InReplyTo)).SetReferences(refs).
		SetFromAddress(clean(p.From.Email)).SetFromName(clean(p.From.Name)).SetTo(to).SetCc(cc).
		SetReplyTo(replyTo).SetSubject(subject).SetTextBody(clean(p.Text)).
		SetSearchText(searchText(subject, p.From, to, cc, clean(p.Text))).
		SetSentAt(at).SetRawKey(rawKey).SetSizeBytes(int64(len(raw))).
		SetError(capRunes(strings.Join(problems, "; "), maxError)).
		SetFolder(folder).SetImapUID(int64(uid))
	if html := clean(p.HTML); html != "" {
		c.SetHTMLBody(html) // sanitised by mail.Parse
	}
	if inbound {
		c.SetDirection(email.DirectionInbound).SetStatus(email.StatusReceived)
	} else {
		c.SetDirection(email.DirectionOutbound).SetStatus(email.StatusSent)
	}
	e, err := c.Save(ctx)
	if err != nil {
		return 0, fmt.Errorf("store email %s: %w", id, err)
	}
	atts, err := m.storeAttachments(ctx, e, p.Attachments)
	if err != nil {
		return 0, err
	}
	if orig != nil {
		return StoredReport, m.applyReport(ctx, mb, orig, p.DSN)
	}

	// Link by every address the message carries but the mailbox's own (a mailbox address kept
	// on a contact would otherwise link all of its mail).
	var addresses []string
	for _, a := range append(append([]schematype.MailAddress{{Email: e.FromAddress}}, to...), cc...) {
		if identity.EmailKey(a.Email) != identity.EmailKey(mb.Email) {
			addresses = append(addresses, a.Email)
		}
	}
	targets, err := ByAddress(ctx, Targets{}, addresses)
	if err != nil {
		return 0, err
	}
	links, err := link(ctx, e, targets)
	if err != nil {
		return 0, err
	}
	if inbound {
		// Mail the broker sent from another client and we find in Sent records no event:
		// email.sent is the API's send (events.Types); the timeline entry above shows it.
		v, err := eventView(ctx, Loaded{Email: e, Attachments: atts, Links: links, Mailbox: mb})
		if err != nil {
			return 0, err
		}
		if err := m.d.Events.Record(ctx, "email.received", v); err != nil {
			return 0, err
		}
	}
	return StoredNew, nil
}

// fileInThread returns the thread the message joins (orig's for a report about orig, else
// findThread's, else a new one) with the message counted in it.
func (m *Module) fileInThread(ctx context.Context, mailbox uuid.UUID, orig *ent.Email, r threadRefs, now time.Time) (uuid.UUID, error) {
	if orig != nil {
		return orig.ThreadID, addToThread(ctx, orig.ThreadID, r.At, now)
	}
	t, err := findThread(ctx, mailbox, r)
	if err != nil {
		return uuid.Nil, err
	}
	if t != nil {
		return t.ID, addToThread(ctx, t.ID, r.At, now)
	}
	t, err = tenancy.Client(ctx).EmailThread.Create().SetMailboxID(mailbox).SetSubject(r.Subject).
		SetSubjectKey(SubjectKey(r.Subject)).SetLastMessageAt(r.At).SetMessageCount(1).Save(ctx)
	if err != nil {
		return uuid.Nil, fmt.Errorf("create thread: %w", err)
	}
	return t.ID, nil
}

// storeAttachments writes the attachments of e to the blob store and their rows. The content
// type is sniffed from the bytes (the sender's declaration is kept nowhere we serve from): a
// "photo.png" that is a PDF is served as application/pdf, an HTML page declared as an image
// as text/html (GET …/content serves every attachment as a download with nosniff).
func (m *Module) storeAttachments(ctx context.Context, e *ent.Email, parts []mail.Part) ([]*ent.EmailAttachment, error) {
	db := tenancy.Client(ctx)
	out := make([]*ent.EmailAttachment, 0, len(parts))
	for i, a := range parts {
		id := uuid.NewSHA1(e.ID, []byte(strconv.Itoa(i)))
		key := fmt.Sprintf("%s/%s/%s", AttachmentPrefix, e.CompanyID, id)
		ct := mimetype.Detect(a.Data).String()
		if err := m.d.Bucket.WriteAll(ctx, key, a.Data, &blob.WriterOptions{ContentType: ct}); err != nil {
			return nil, fmt.Errorf("store attachment %s: %w", id, err)
		}
		sum := sha256.Sum256(a.Data)
		att, err := db.EmailAttachment.Create().SetID(id).SetEmailID(e.ID).SetThreadID(e.ThreadID).
			SetFilename(capRunes(clean(a.Filename), 255)).SetContentType(ct).SetContentID(capRunes(clean(a.ContentID), 255)).
			SetInline(a.Inline).SetSizeBytes(int64(len(a.Data))).SetSha256(hex.EncodeToString(sum[:])).
			SetBlobKey(key).Save(ctx)
		if err != nil {
			return nil, fmt.Errorf("store attachment %s: %w", id, err)
		}
		out = append(out, att)
	}
	return out, nil
}

// applyReport marks orig, one of our outbound messages, by the delivery status notification
// d: delivered (delivered, relayed, expanded: the receiving side took it) sets delivered_at and
// moves queued or sent to delivered (never back from opened or clicked), failed sets failed
// with the diagnostic; each records its event once. delayed changes nothing.
func (m *Module) applyReport(ctx context.Context, mb *ent.Mailbox, orig *ent.Email, d *mail.DSN) error {
	var typ string
	u := orig.Update()
	switch d.Action {
	case "delivered", "relayed", "expanded":
		if orig.DeliveredAt != nil {
			return nil
		}
		typ = "email.delivered"
		u.SetDeliveredAt(m.d.Now())
		if orig.Status == email.StatusQueued || orig.Status == email.StatusSent {
			u.SetStatus(email.StatusDelivered)
		}
	case "failed":
		if orig.Status == email.StatusFailed {
			return nil
		}
		typ = "email.failed"
		msg := clean(d.Diagnostic)
		if msg == "" {
			msg = "delivery failed"
		}
		if s := clean(d.Status); s != "" && !strings.Contains(msg, s) {
			msg += " (status " + s + ")"
		}
		u.SetStatus(email.StatusFailed).SetError(capRunes(msg, maxError))
	default:
		return nil
	}
	e, err := u.Save(ctx)
	if err != nil {
		return fmt.Errorf("mark email %s by its delivery report: %w", orig.ID, err)
	}
	db := tenancy.Client(ctx)
	atts, err := db.EmailAttachment.Query().Where(emailattachment.EmailID(e.ID)).All(ctx)
	if err != nil {
		return fmt.Errorf("attachments of email %s: %w", e.ID, err)
	}
	links, err := db.EmailLink.Query().Where(emaillink.EmailID(e.ID)).All(ctx)
	if err != nil {
		return fmt.Errorf("links of email %s: %w", e.ID, err)
	}
	v, err := eventView(ctx, Loaded{Email: e, Attachments: atts, Links: links, Mailbox: mb})
	if err != nil {
		return err
	}
	return m.d.Events.Record(ctx, typ, v)
}

// syntheticID is the Message-ID given to a message without one (or with one too long to
// index): the hash of its bytes, so the same message synced again (another folder, after a
// UIDVALIDITY change) is recognised.
func syntheticID(raw []byte) string {
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:16]) + "@synthesized.brokerdesk.invalid"
}

// searchText is what GET /email-threads?q= searches: subject, addresses (and names) and text,
// lower case, bounded.
func searchText(subject string, from mail.Address, to, cc []schematype.MailAddress, text string) string {
	var b strings.Builder
	b.WriteString(subject)
	for _, a := range append(append([]schematype.MailAddress{{Email: clean(from.Email), Name: clean(from.Name)}}, to...), cc...) {
		b.WriteString(" ")
		b.WriteString(a.Email)
		if a.Name != "" {
			b.WriteString(" ")
			b.WriteString(a.Name)
		}
	}
	b.WriteString(" ")
	b.WriteString(text)
	return capRunes(strings.ToLower(b.String()), maxSearchText)
}

func addrs(as []mail.Address) []schematype.MailAddress {
	out := make([]schematype.MailAddress, 0, len(as))
	for _, a := range as {
		out = append(out, schematype.MailAddress{Email: clean(a.Email), Name: clean(a.Name)})
	}
	return out
}

// clean makes s storable in a PostgreSQL text column: valid UTF-8, no NUL (which text refuses:
// one such header would stop the sync on that message for ever).
func clean(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	return strings.ReplaceAll(s, "\x00", "")
}

func cleanAll(ss []string) []string {
	out := make([]string, 0, len(ss))
	for _, s := range ss {
		if s = clean(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// capRunes cuts s to at most n runes.
func capRunes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos]
		}
		i++
	}
	return s
}
