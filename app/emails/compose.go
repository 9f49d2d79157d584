package emails

import (
	"bytes"
	"context"
	"fmt"
	stdhtml "html"
	"io"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/rs/zerolog"
	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"
	"golang.org/x/net/html"

	"github.com/brokerdesk/brokerdesk/app/platform/blobstore"
	"github.com/brokerdesk/brokerdesk/app/platform/mail"
	"github.com/brokerdesk/brokerdesk/ent"
	entcompany "github.com/brokerdesk/brokerdesk/ent/company"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// maxReplyReferences bounds the References header of a reply: the first message and the
// latest ones, as RFC 5322 §3.6.4 suggests for long threads.
const maxReplyReferences = 20

// composed is the message as it is sent and as it is stored.
type composed struct {
	id         uuid.UUID
	messageID  string
	inReplyTo  string
	references []string
	raw        []byte
	rawKey     string
	// storedText and storedHTML are the bodies the API shows: what was sent, with the
	// unsubscribe link, without the tracking pixel and redirects (a broker reading the sent
	// mail through the API must not count as an open or a click).
	storedText string
	storedHTML *string
	tracked    bool
	files      [][]byte // the documents' contents, in p.documents' order
}

// compose builds the RFC 5322 message of p: From the mailbox (address and label), our
// Message-ID in the mailbox's domain, the reply headers, for marketing mail List-Unsubscribe
// with one-click (RFC 8058) and an unsubscribe link in the body, and when tracking applies the
// HTML's links through the click redirect and the open pixel.
func (m *Module) compose(ctx context.Context, company uuid.UUID, p *prepared) (*composed, error) {
	c := &composed{id: uuid.Must(uuid.NewV7()), messageID: mail.NewMessageID(domainOfAddress(p.mailbox.Email))}
	c.rawKey = fmt.Sprintf("%s/%s/%s.eml", RawPrefix, company, c.id)
	if e := p.parent; e != nil {
		c.inReplyTo = e.MessageID
		refs := append(append([]string{}, e.References...), e.MessageID)
		if len(refs) > maxReplyReferences {
			refs = append(refs[:1], refs[len(refs)-maxReplyReferences+1:]...)
		}
		c.references = refs
	}
	o := p.o
	text, htm := p.text, p.html
	var headers [][2]string
	if p.marketing {
		u := m.d.PublicURL + "/u/" + m.sign(token{purpose: purposeUnsubscribe, company: company, email: c.id, value: o.To[0].Email})
		headers = append(headers, [2]string{"List-Unsubscribe", "<" + u + ">"},
			[2]string{"List-Unsubscribe-Post", "List-Unsubscribe=One-Click"})
		if text != "" || htm == "" {
			text = strings.TrimRight(text, "\r\n") + "\n\n-- \nAbmelden / Unsubscribe: " + u + "\n"
		}
		if htm != "" {
			htm = beforeBodyEnd(htm, `<p style="font-size:12px;color:#666666">Sie möchten diese E-Mails nicht mehr erhalten? `+
				`<a href="`+stdhtml.EscapeString(u)+`">Abmelden / Unsubscribe</a></p>`)
		}
	}
	c.storedText = redact(text, o.Secrets)
	if htm != "" {
		stored := redact(htm, o.Secrets)
		c.storedHTML = &stored
	}
	if p.tracking && htm != "" {
		allowed, err := trackingAllowed(ctx)
		if err != nil {
			return nil, err
		}
		if allowed {
			htm = m.track(htm, company, c.id)
			c.tracked = true
		}
	}
	msg := mail.Message{From: mail.Address{Email: p.mailbox.Email, Name: p.mailbox.Label}, To: mailAddresses(o.To),
		Cc: mailAddresses(o.Cc), Bcc: mailAddresses(o.Bcc), Subject: p.subject, Text: text, HTML: htm,
		MessageID: c.messageID, InReplyTo: c.inReplyTo, References: c.references, Headers: headers}
	for _, d := range p.documents {
		data, err := m.d.Bucket.ReadAll(ctx, d.BlobKey)
		if err != nil {
			return nil, fmt.Errorf("read document %s: %w", d.ID, err)
		}
		c.files = append(c.files, data)
		msg.Attachments = append(msg.Attachments, mail.Attachment{Filename: d.Filename, ContentType: d.ContentType, Data: data})
	}
	raw, err := mail.Compose(msg)
	if err != nil {
		return nil, headerError(err)
	}
	c.raw = raw
	return c, nil
}

// trackingAllowed reads whether the company of ctx allows open and click tracking
// (companies.email_tracking).
func trackingAllowed(ctx context.Context) (bool, error) {
	id, _ := tenancy.CompanyID(ctx)
	co, err := tenancy.Client(ctx).Company.Query().Where(entcompany.ID(id)).Select(entcompany.FieldEmailTracking).Only(ctx)
	if err != nil {
		return false, fmt.Errorf("read company %s: %w", id, err)
	}
	return co.EmailTracking, nil
}

// track rewrites every http(s) link of the HTML (a and area href) through the signed click
// redirect and adds the open pixel before </body>. The unsubscribe link is left as it is.
func (m *Module) track(htm string, company, emailID uuid.UUID) string {
	var out bytes.Buffer
	z := html.NewTokenizer(strings.NewReader(htm))
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			if z.Err() != io.EOF {
				out.Write(z.Raw())
			}
			break
		}
		raw := z.Raw()
		if tt != html.StartTagToken && tt != html.SelfClosingTagToken {
			out.Write(raw)
			continue
		}
		tok := z.Token()
		if tok.Data != "a" && tok.Data != "area" {
			out.Write(raw)
			continue
		}
		changed := false
		for i, a := range tok.Attr {
			if a.Namespace != "" || strings.ToLower(a.Key) != "href" {
				continue
			}
			u := strings.TrimSpace(a.Val)
			lower := strings.ToLower(u)
			if !strings.HasPrefix(lower, "http://") && !strings.HasPrefix(lower, "https://") ||
				strings.HasPrefix(u, m.d.PublicURL+"/u/") {
				continue
			}
			tok.Attr[i].Val = m.d.PublicURL + "/t/c/" + m.sign(token{purpose: purposeClick, company: company, email: emailID, value: u})
			changed = true
		}
		if changed {
			out.WriteString(tok.String())
		} else {
			out.Write(raw)
		}
	}
	pixel := m.d.PublicURL + "/t/o/" + m.sign(token{purpose: purposeOpen, company: company, email: emailID}) + ".gif"
	return beforeBodyEnd(out.String(), `<img src="`+stdhtml.EscapeString(pixel)+`" width="1" height="1" alt="" style="border:0;width:1px;height:1px">`)
}

// beforeBodyEnd inserts s before the last </body> of htm, or appends it.
func beforeBodyEnd(htm, s string) string {
	if i := strings.LastIndex(strings.ToLower(htm), "</body>"); i >= 0 {
		return htm[:i] + s + htm[i:]
	}
	return htm + s
}

// placeholderValues are the values a template is filled with: the contact's and the lead's
// given, the acting user's (else the mailbox owner's: a company key sends in the owner's
// name), the company's, the first recipient's, then the caller's placeholders over them.
func (s *Service) placeholderValues(ctx context.Context, p *prepared) (map[string]string, error) {
	db := tenancy.Client(ctx)
	v := map[string]string{}
	if id := p.o.ContactID; id != nil {
		c, err := db.Contact.Get(ctx, *id)
		if err != nil {
			return nil, fmt.Errorf("read contact %s: %w", *id, err)
		}
		name := strings.TrimSpace(c.FirstName + " " + c.LastName)
		if name == "" {
			name = c.CompanyName
		}
		v["contact.firstName"], v["contact.lastName"], v["contact.name"] = c.FirstName, c.LastName, name
		v["contact.companyName"] = c.CompanyName
		if c.Email != nil {
			v["contact.email"] = *c.Email
		}
	}
	if id := p.o.LeadID; id != nil {
		l, err := db.Lead.Get(ctx, *id)
		if err != nil {
			return nil, fmt.Errorf("read lead %s: %w", *id, err)
		}
		v["lead.firstName"], v["lead.lastName"] = l.FirstName, l.LastName
		v["lead.name"] = strings.TrimSpace(l.FirstName + " " + l.LastName)
		if l.Email != nil {
			v["lead.email"] = *l.Email
		}
	}
	user := tenancy.ActingUser(ctx)
	if user == nil {
		user = p.mailbox.OwnerID
	}
	if user != nil {
		u, err := db.User.Get(ctx, *user)
		if err != nil && !ent.IsNotFound(err) {
			return nil, fmt.Errorf("read user %s: %w", *user, err)
		}
		if u != nil {
			v["user.firstName"], v["user.lastName"], v["user.email"] = u.FirstName, u.LastName, u.Email
			v["user.name"] = strings.TrimSpace(u.FirstName + " " + u.LastName)
		}
	}
	if id, ok := tenancy.CompanyID(ctx); ok {
		co, err := db.Company.Query().Where(entcompany.ID(id)).Select(entcompany.FieldName).Only(ctx)
		if err != nil {
			return nil, fmt.Errorf("read company %s: %w", id, err)
		}
		v["company.name"] = co.Name
	}
	if len(p.o.To) > 0 {
		v["recipient.email"], v["recipient.name"] = p.o.To[0].Email, p.o.To[0].Name
	}
	v["mailbox.email"], v["mailbox.label"] = p.mailbox.Email, p.mailbox.Label
	for k, val := range p.o.Placeholders {
		v[k] = val
	}
	return v, nil
}

// htmlEscaped are values for an HTML template: a contact named "<b>" stays text.
func htmlEscaped(values map[string]string) map[string]string {
	out := make(map[string]string, len(values))
	for k, v := range values {
		out[k] = stdhtml.EscapeString(v)
	}
	return out
}

func mailAddresses(list []schematype.MailAddress) []mail.Address {
	out := make([]mail.Address, len(list))
	for i, a := range list {
		out[i] = mail.Address{Email: a.Email, Name: a.Name}
	}
	return out
}

// domainOfAddress is the part after the last @ (the Message-ID's right side).
func domainOfAddress(addr string) string {
	if i := strings.LastIndexByte(addr, '@'); i >= 0 {
		return addr[i+1:]
	}
	return ""
}

// writeBlob stores data under key and removes it again when the request's transaction rolls
// back (a message that was never stored leaves no blob).
func (m *Module) writeBlob(ctx context.Context, key string, data []byte, contentType string) error {
	if err := m.d.Bucket.WriteAll(ctx, key, data, &blob.WriterOptions{ContentType: contentType}); err != nil {
		return blobstore.WriteFailed(ctx, "e-mail", err)
	}
	remove := func() { m.removeBlob(ctx, key) }
	if err := tenancy.AfterRollback(ctx, remove); err != nil {
		// Not in a request transaction (a worker's): the caller's rollback cannot reach it;
		// the blob stays an orphan rather than a stored row losing its message.
		zerolog.Ctx(ctx).Debug().Str("blob_key", key).Msg("send outside a request transaction: no removal on rollback")
	}
	return nil
}

// removeBlob deletes a blob of a message that was not stored; a failure is logged only (an
// orphan costs space, nothing else).
func (m *Module) removeBlob(ctx context.Context, key string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err := m.d.Bucket.Delete(ctx, key); err != nil && gcerrors.Code(err) != gcerrors.NotFound {
		zerolog.Ctx(ctx).Warn().Err(err).Str("blob_key", key).Msg("remove e-mail blob")
	}
}

// attachDocument stores the copy of document d sent with e and its attachment row. The
// content type is the document's, which was sniffed at upload, not declared.
func (m *Module) attachDocument(ctx context.Context, company uuid.UUID, e *ent.Email, d *ent.Document, data []byte) (*ent.EmailAttachment, error) {
	key := blobstore.NewKey(AttachmentPrefix, company)
	if err := m.writeBlob(ctx, key, data, d.ContentType); err != nil {
		return nil, err
	}
	a, err := tenancy.Client(ctx).EmailAttachment.Create().SetEmailID(e.ID).SetThreadID(e.ThreadID).
		SetFilename(d.Filename).SetContentType(d.ContentType).SetSizeBytes(int64(len(data))).
		SetSha256(d.Sha256).SetBlobKey(key).Save(ctx)
	if err != nil {
		return nil, fmt.Errorf("store attachment of email %s: %w", e.ID, err)
	}
	return a, nil
}

// redact replaces each secret in s by "[entfernt]" (Outgoing.Secrets), also in the HTML-escaped
// form an HTML body carries it in.
func redact(s string, secrets []string) string {
	for _, x := range secrets {
		if x == "" {
			continue
		}
		s = strings.ReplaceAll(s, x, "[entfernt]")
		if esc := stdhtml.EscapeString(x); esc != x {
			s = strings.ReplaceAll(s, esc, "[entfernt]")
		}
	}
	return s
}
