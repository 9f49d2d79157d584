package mail

import (
	"bytes"
	"crypto/rand"
	"encoding/base32"
	"fmt"
	"io"
	"mime"
	netmail "net/mail"
	"strings"
	"time"

	"github.com/emersion/go-message"
	gomail "github.com/emersion/go-message/mail"
)

// Attachment is a file of a composed message. Inline attachments with a ContentID go into a
// multipart/related beside the HTML (referenced as cid:ContentID); the others into the
// multipart/mixed.
type Attachment struct {
	Filename    string
	ContentType string // "" -> application/octet-stream
	ContentID   string // without <>
	Inline      bool
	Data        []byte
}

// Message is a message to compose.
type Message struct {
	From    Address
	To      []Address
	Cc      []Address
	Bcc     []Address // never written into the message: the caller adds them to the envelope
	ReplyTo *Address

	Subject string
	Text    string // either or both bodies; both -> multipart/alternative
	HTML    string

	MessageID  string // without <>; Compose uses NewMessageID(domain of From) when empty
	InReplyTo  string // without <>
	References []string
	Date       time.Time // zero: now

	// Headers are extra header fields, e.g. {"List-Unsubscribe", "<https://...>"}. The fields
	// Compose writes itself (From, To, Subject, Content-Type, ...) are refused here.
	Headers     [][2]string
	Attachments []Attachment
}

// HeaderError is a header value Compose refuses: CR, LF or NUL (header injection), an invalid
// address, a field Compose writes itself.
type HeaderError struct {
	Field  string
	Reason string
}

func (e *HeaderError) Error() string {
	return fmt.Sprintf("mail: header %s: %s", e.Field, e.Reason)
}

// CheckHeader refuses a header value carrying CR, LF or NUL: written into a header it would end
// the field and start another (header injection, e.g. a Bcc smuggled in through a subject).
func CheckHeader(field, value string) error {
	if i := strings.IndexAny(value, "\r\n\x00"); i >= 0 {
		return &HeaderError{Field: field, Reason: "contains a line break or NUL character"}
	}
	return nil
}

// composedFields are the fields Compose writes; Message.Headers may not set them.
var composedFields = map[string]bool{
	"from": true, "to": true, "cc": true, "bcc": true, "reply-to": true, "subject": true,
	"message-id": true, "in-reply-to": true, "references": true, "date": true,
	"mime-version": true, "content-type": true, "content-transfer-encoding": true,
	"content-disposition": true, "content-id": true, "sender": true, "return-path": true,
}

// checkFieldName accepts printable ASCII without colon or space (RFC 5322 ftext).
func checkFieldName(name string) error {
	if name == "" {
		return &HeaderError{Field: "(empty)", Reason: "empty field name"}
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c < 33 || c > 126 || c == ':' {
			return &HeaderError{Field: strings.ToValidUTF8(name, "?"), Reason: "invalid field name"}
		}
	}
	if composedFields[strings.ToLower(name)] {
		return &HeaderError{Field: name, Reason: "is written by Compose and cannot be set as an extra header"}
	}
	return nil
}

// CheckAddress validates one address for field: no CR/LF/NUL in name or e-mail, and the e-mail
// an RFC 5322 addr-spec (local@domain).
func CheckAddress(field string, a Address) error {
	if err := CheckHeader(field, a.Name); err != nil {
		return err
	}
	if err := CheckHeader(field, a.Email); err != nil {
		return err
	}
	e := strings.TrimSpace(a.Email)
	if e == "" {
		return &HeaderError{Field: field, Reason: "empty e-mail address"}
	}
	if strings.ContainsAny(e, "<>,; \t\"") {
		return &HeaderError{Field: field, Reason: fmt.Sprintf("invalid e-mail address %q", e)}
	}
	p, err := netmail.ParseAddress("<" + e + ">")
	if err != nil || p.Address != e || !strings.Contains(e, "@") {
		return &HeaderError{Field: field, Reason: fmt.Sprintf("invalid e-mail address %q", e)}
	}
	at := strings.LastIndexByte(e, '@')
	if at == 0 || at == len(e)-1 {
		return &HeaderError{Field: field, Reason: fmt.Sprintf("invalid e-mail address %q", e)}
	}
	return nil
}

// checkMsgID validates a message id given without <>.
func checkMsgID(field, id string) error {
	if err := CheckHeader(field, id); err != nil {
		return err
	}
	if id == "" || strings.ContainsAny(id, "<> \t\"(),;\\[]") || !strings.Contains(id, "@") {
		return &HeaderError{Field: field, Reason: fmt.Sprintf("invalid message id %q (want left@right, without <>)", id)}
	}
	return nil
}

// NewMessageID returns a fresh random message id "<random>@domain" without the brackets.
func NewMessageID(domain string) string {
	var b [20]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	domain = strings.Trim(strings.TrimSpace(domain), "[]")
	if domain == "" || strings.ContainsAny(domain, "<> \t\r\n@") {
		domain = "localhost"
	}
	return strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:])) + "@" + domain
}

// domainOf is the part after the last @.
func domainOf(email string) string {
	if i := strings.LastIndexByte(email, '@'); i >= 0 {
		return email[i+1:]
	}
	return ""
}

// formatAddress writes an address as a header value: the name RFC 2047 encoded when it is not
// plain ASCII, quoted when it has specials.
func formatAddress(a Address) string {
	na := netmail.Address{Name: a.Name, Address: strings.TrimSpace(a.Email)}
	return na.String()
}

// Compose writes m as an RFC 5322 message with MIME (CRLF line ends). Refused header values
// (injection, invalid addresses) are a *HeaderError.
func Compose(m Message) ([]byte, error) {
	if err := checkMessage(&m); err != nil {
		return nil, err
	}

	var h gomail.Header
	h.SetDate(m.dateOrNow())
	h.SetAddressList("From", toNetAddrs([]Address{m.From}))
	if len(m.To) > 0 {
		h.SetAddressList("To", toNetAddrs(m.To))
	}
	if len(m.Cc) > 0 {
		h.SetAddressList("Cc", toNetAddrs(m.Cc))
	}
	if m.ReplyTo != nil {
		h.SetAddressList("Reply-To", toNetAddrs([]Address{*m.ReplyTo}))
	}
	// Bcc is never written: every recipient would see the blind copies.
	h.SetSubject(m.Subject)
	h.Set("Message-ID", "<"+m.MessageID+">")
	if m.InReplyTo != "" {
		h.Set("In-Reply-To", "<"+m.InReplyTo+">")
	}
	if len(m.References) > 0 {
		refs := make([]string, len(m.References))
		for i, r := range m.References {
			refs[i] = "<" + r + ">"
		}
		h.Set("References", strings.Join(refs, " "))
	}
	for _, kv := range m.Headers {
		h.Add(kv[0], encodeHeaderValue(kv[1]))
	}
	h.Set("MIME-Version", "1.0")

	var buf bytes.Buffer
	if err := writeBody(&buf, h.Header, m); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// encodeHeaderValue RFC 2047 encodes a non-ASCII free-text value; ASCII stays as it is.
func encodeHeaderValue(v string) string {
	for i := 0; i < len(v); i++ {
		if v[i] >= 0x80 {
			return mime.QEncoding.Encode("utf-8", v)
		}
	}
	return v
}

func (m Message) dateOrNow() time.Time {
	if m.Date.IsZero() {
		return time.Now()
	}
	return m.Date
}

func toNetAddrs(as []Address) []*gomail.Address {
	out := make([]*gomail.Address, len(as))
	for i, a := range as {
		out[i] = &gomail.Address{Name: a.Name, Address: strings.TrimSpace(a.Email)}
	}
	return out
}

// checkMessage validates every header value of m and fills MessageID.
func checkMessage(m *Message) error {
	if err := CheckAddress("From", m.From); err != nil {
		return err
	}
	for _, l := range []struct {
		field string
		as    []Address
	}{{"To", m.To}, {"Cc", m.Cc}, {"Bcc", m.Bcc}} {
		for _, a := range l.as {
			if err := CheckAddress(l.field, a); err != nil {
				return err
			}
		}
	}
	if m.ReplyTo != nil {
		if err := CheckAddress("Reply-To", *m.ReplyTo); err != nil {
			return err
		}
	}
	if err := CheckHeader("Subject", m.Subject); err != nil {
		return err
	}
	if m.MessageID == "" {
		m.MessageID = NewMessageID(domainOf(m.From.Email))
	} else if err := checkMsgID("Message-ID", m.MessageID); err != nil {
		return err
	}
	if m.InReplyTo != "" {
		if err := checkMsgID("In-Reply-To", m.InReplyTo); err != nil {
			return err
		}
	}
	for _, r := range m.References {
		if err := checkMsgID("References", r); err != nil {
			return err
		}
	}
	for _, kv := range m.Headers {
		if err := checkFieldName(kv[0]); err != nil {
			return err
		}
		if err := CheckHeader(kv[0], kv[1]); err != nil {
			return err
		}
	}
	for i, a := range m.Attachments {
		field := fmt.Sprintf("attachment %d", i+1)
		if err := CheckHeader(field+" filename", a.Filename); err != nil {
			return err
		}
		if err := CheckHeader(field+" content type", a.ContentType); err != nil {
			return err
		}
		if a.ContentType != "" {
			if _, _, err := mime.ParseMediaType(a.ContentType); err != nil {
				return &HeaderError{Field: field + " content type", Reason: fmt.Sprintf("invalid media type %q", a.ContentType)}
			}
		}
		if a.ContentID != "" {
			if err := CheckHeader(field+" content id", a.ContentID); err != nil {
				return err
			}
			if strings.ContainsAny(a.ContentID, "<> \t\"") {
				return &HeaderError{Field: field + " content id", Reason: "invalid content id (give it without <>)"}
			}
		}
	}
	return nil
}

// writeBody writes the header h and the MIME tree of m:
//
//	multipart/mixed                  (when there are attachments)
//	  multipart/related              (when there are inline parts with a Content-ID)
//	    multipart/alternative        (when there are both text and HTML)
//	      text/plain; text/html
//	    inline images
//	  attachments
func writeBody(w io.Writer, h message.Header, m Message) error {
	var related, mixed []Attachment
	for _, a := range m.Attachments {
		if a.Inline && a.ContentID != "" {
			related = append(related, a)
		} else {
			mixed = append(mixed, a)
		}
	}

	// Each level is a func that writes a part into a parent given its header.
	bodies := func(parent func(message.Header) (*message.Writer, error)) error {
		switch {
		case m.Text != "" && m.HTML != "":
			var ah message.Header
			ah.SetContentType("multipart/alternative", nil)
			aw, err := parent(ah)
			if err != nil {
				return err
			}
			if err := writeText(aw.CreatePart, "text/plain", m.Text); err != nil {
				return err
			}
			if err := writeText(aw.CreatePart, "text/html", m.HTML); err != nil {
				return err
			}
			return aw.Close()
		case m.HTML != "":
			return writeText(parent, "text/html", m.HTML)
		default:
			return writeText(parent, "text/plain", m.Text)
		}
	}
	withRelated := func(parent func(message.Header) (*message.Writer, error)) error {
		if len(related) == 0 {
			return bodies(parent)
		}
		var rh message.Header
		rh.SetContentType("multipart/related", nil)
		rw, err := parent(rh)
		if err != nil {
			return err
		}
		if err := bodies(rw.CreatePart); err != nil {
			return err
		}
		for _, a := range related {
			if err := writeAttachment(rw, a); err != nil {
				return err
			}
		}
		return rw.Close()
	}

	// The top level: the message header merged with the first part's header.
	top := func(ph message.Header) (*message.Writer, error) {
		fields := ph.Fields()
		for fields.Next() {
			h.Add(fields.Key(), fields.Value())
		}
		return message.CreateWriter(w, h)
	}
	if len(mixed) == 0 {
		return withRelated(top)
	}
	var mh message.Header
	mh.SetContentType("multipart/mixed", nil)
	mw, err := top(mh)
	if err != nil {
		return err
	}
	if err := withRelated(mw.CreatePart); err != nil {
		return err
	}
	for _, a := range mixed {
		if err := writeAttachment(mw, a); err != nil {
			return err
		}
	}
	return mw.Close()
}

// writeText writes a UTF-8 text part, quoted-printable, with CRLF line ends.
func writeText(create func(message.Header) (*message.Writer, error), mediaType, body string) error {
	var th message.Header
	th.SetContentType(mediaType, map[string]string{"charset": "utf-8"})
	th.Set("Content-Transfer-Encoding", "quoted-printable")
	tw, err := create(th)
	if err != nil {
		return err
	}
	// Normalise line ends: the quoted-printable writer turns each LF into CRLF, so a CR of a
	// CRLF would end up as "=0D".
	body = strings.ReplaceAll(body, "\r\n", "\n")
	body = strings.ReplaceAll(body, "\r", "\n")
	if _, err := io.WriteString(tw, body); err != nil {
		return err
	}
	return tw.Close()
}

// writeAttachment writes one attachment part, base64, its filename RFC 2231 encoded when it is
// not plain ASCII (mime.FormatMediaType does that).
func writeAttachment(parent *message.Writer, a Attachment) error {
	ct := a.ContentType
	if ct == "" {
		ct = "application/octet-stream"
	}
	mediaType, params, _ := mime.ParseMediaType(ct)
	if params == nil {
		params = map[string]string{}
	}
	// go-message writes only UTF-8 text; the data of an attachment is base64 bytes anyway.
	if cs := strings.ToLower(params["charset"]); cs != "" && cs != "utf-8" && cs != "us-ascii" {
		delete(params, "charset")
	}
	if a.Filename != "" {
		params["name"] = a.Filename
	}
	var ah message.Header
	ah.SetContentType(mediaType, params)
	disp := "attachment"
	if a.Inline {
		disp = "inline"
	}
	// RFC 2231 (filename*=utf-8''...) as mime.FormatMediaType writes it; go-message's own
	// setter would write RFC 2047 words, which RFC 2047 §5 forbids in parameters. The name
	// parameter of Content-Type keeps the RFC 2047 form that old Outlook versions read.
	cd := disp
	if a.Filename != "" {
		cd = mime.FormatMediaType(disp, map[string]string{"filename": a.Filename})
		if cd == "" {
			return &HeaderError{Field: "attachment filename", Reason: fmt.Sprintf("cannot encode %q", a.Filename)}
		}
	}
	ah.Set("Content-Disposition", cd)
	if a.ContentID != "" {
		ah.Set("Content-ID", "<"+a.ContentID+">")
	}
	ah.Set("Content-Transfer-Encoding", "base64")
	pw, err := parent.CreatePart(ah)
	if err != nil {
		return err
	}
	if _, err := pw.Write(a.Data); err != nil {
		return err
	}
	return pw.Close()
}
