package mail

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	netmail "net/mail"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/emersion/go-message"
	"github.com/emersion/go-message/charset"
	gomail "github.com/emersion/go-message/mail"
	"github.com/emersion/go-message/textproto"
	"golang.org/x/text/encoding/charmap"
)

// Part is an attachment of a parsed message (or a body part that is neither the text nor the
// HTML body).
type Part struct {
	Filename     string
	DeclaredType string // the sender's Content-Type media type: not to be trusted for serving
	ContentID    string // without <>
	Inline       bool
	Data         []byte
}

// DSN is a delivery status notification (RFC 3464, multipart/report;
// report-type=delivery-status).
type DSN struct {
	OriginalMessageID string // without <>: of the message this report is about
	Action            string // delivered | failed | delayed | relayed | expanded (lower case)
	Status            string // e.g. 5.1.1
	Diagnostic        string // e.g. "550 5.1.1 user unknown"
}

// Parsed is what Parse reads from a message.
type Parsed struct {
	MessageID  string // without <>
	InReplyTo  string
	References []string

	From    Address
	To      []Address
	Cc      []Address
	ReplyTo []Address

	Subject string
	Date    time.Time // zero when missing or unparseable

	Text string // derived from HTML (tags stripped) when only HTML exists
	HTML string // already sanitised

	Attachments []Part
	// Problems are the non-fatal problems met: an unknown charset, a malformed part, a bad
	// header encoding... A message with problems is still stored, with what could be read.
	Problems []string

	DSN *DSN
}

// Limits of Parse against pathological messages.
const (
	maxDepth = 20
	maxParts = 500
)

// Parse reads a raw message. It never fails and never panics: a malformed message yields what
// could be read plus Problems.
func Parse(raw []byte) (p *Parsed) {
	p = &Parsed{}
	defer func() {
		// A bug in a parser below must not stop a mailbox's sync on one message.
		if r := recover(); r != nil {
			p.Problems = append(p.Problems, fmt.Sprintf("parser failure: %v", r))
		}
	}()

	h, body, err := readHeader(raw)
	if err != nil {
		p.problem("malformed header block (%v): read leniently", err)
	}
	p.readHeaders(h)

	st := &walkState{p: p}
	ent, err := message.New(message.Header{Header: h}, body)
	if ent == nil {
		p.problem("unreadable body: %v", err)
		p.Text = toValidUTF8(string(body2bytes(body)))
		return p
	}
	st.entity(ent, err, 0, "")
	if st.text.Len() > 0 {
		// Trailing line breaks are transport artefacts (SMTP ends every message with CRLF).
		p.Text = strings.TrimRight(st.text.String(), "\r\n")
	}
	if st.html != "" {
		p.HTML = Sanitize(st.html)
		if p.Text == "" {
			p.Text = HTMLToText(st.html)
		}
	}
	return p
}

func body2bytes(r io.Reader) []byte {
	if r == nil {
		return nil
	}
	b, _ := io.ReadAll(r)
	return b
}

func (p *Parsed) problem(format string, args ...any) {
	if len(p.Problems) < 50 {
		p.Problems = append(p.Problems, fmt.Sprintf(format, args...))
	}
}

// readHeader reads the header block of raw with go-message; when it refuses the block, a
// lenient reader keeps every "Name: value" line and skips the rest.
func readHeader(raw []byte) (textproto.Header, io.Reader, error) {
	br := bufio.NewReader(bytes.NewReader(raw))
	h, err := textproto.ReadHeader(br)
	if err == nil {
		return h, br, nil
	}
	lh, rest := lenientHeader(raw)
	return lh, bytes.NewReader(rest), err
}

// lenientHeader splits raw at the first empty line and keeps the well-formed fields.
func lenientHeader(raw []byte) (textproto.Header, []byte) {
	var h textproto.Header
	end, rest := len(raw), []byte(nil)
	for _, sep := range [][]byte{[]byte("\r\n\r\n"), []byte("\n\n")} {
		if i := bytes.Index(raw, sep); i >= 0 && i < end {
			end, rest = i, raw[i+len(sep):]
		}
	}
	lines := strings.Split(strings.ReplaceAll(string(raw[:end]), "\r\n", "\n"), "\n")
	var fields [][2]string
	for _, l := range lines {
		if l == "" {
			continue
		}
		if (l[0] == ' ' || l[0] == '\t') && len(fields) > 0 {
			fields[len(fields)-1][1] += " " + strings.TrimSpace(l)
			continue
		}
		k, v, ok := strings.Cut(l, ":")
		k = strings.TrimSpace(k)
		if !ok || k == "" || strings.ContainsAny(k, " \t") {
			continue
		}
		fields = append(fields, [2]string{k, strings.TrimSpace(v)})
	}
	// textproto.Header.Add prepends; add in reverse to keep the order.
	for i := len(fields) - 1; i >= 0; i-- {
		h.Add(fields[i][0], fields[i][1])
	}
	return h, rest
}

var msgIDRe = regexp.MustCompile(`<([^<>\s]+)>`)

// msgIDs reads the message ids of a header value leniently: every <...>; a value without
// brackets (seen in the wild) is taken as one id when it has no space.
func msgIDs(v string) []string {
	v = strings.TrimSpace(v)
	if v == "" {
		return nil
	}
	var out []string
	for _, m := range msgIDRe.FindAllStringSubmatch(v, -1) {
		out = append(out, m[1])
	}
	if len(out) == 0 && !strings.ContainsAny(v, " \t<>") {
		out = append(out, v)
	}
	return out
}

// readHeaders fills the header fields of p from h.
func (p *Parsed) readHeaders(th textproto.Header) {
	h := gomail.Header{Header: message.Header{Header: th}}
	if ids := msgIDs(h.Get("Message-Id")); len(ids) > 0 {
		p.MessageID = ids[0]
	}
	if ids := msgIDs(h.Get("In-Reply-To")); len(ids) > 0 {
		p.InReplyTo = ids[0]
	}
	p.References = msgIDs(h.Get("References"))

	if from := p.addresses(h, "From"); len(from) > 0 {
		p.From = from[0]
	} else if h.Get("From") == "" {
		p.problem("no From header")
	}
	p.To = p.addresses(h, "To")
	p.Cc = p.addresses(h, "Cc")
	p.ReplyTo = p.addresses(h, "Reply-To")

	subject, err := h.Subject()
	if err != nil {
		p.problem("subject: %v", err)
		subject = h.Get("Subject")
	}
	p.Subject = toValidUTF8(subject)

	if v := h.Get("Date"); v != "" {
		d, err := netmail.ParseDate(v)
		if err != nil {
			d, err = parseLooseDate(v)
		}
		if err != nil {
			p.problem("unparseable Date %q", truncate(v, 80))
		} else {
			p.Date = d
		}
	}
}

// addresses reads an address list header; a malformed list is read address by address and,
// failing that, by the bare e-mail addresses it contains.
func (p *Parsed) addresses(h gomail.Header, key string) []Address {
	v := h.Get(key)
	if strings.TrimSpace(v) == "" {
		return nil
	}
	list, err := h.AddressList(key)
	if err == nil {
		out := make([]Address, 0, len(list))
		for _, a := range list {
			out = append(out, Address{Email: a.Address, Name: toValidUTF8(a.Name)})
		}
		return out
	}
	p.problem("%s: %v", key, err)
	var out []Address
	for _, m := range bareAddrRe.FindAllString(v, -1) {
		out = append(out, Address{Email: m})
	}
	return out
}

var bareAddrRe = regexp.MustCompile(`[A-Za-z0-9.!#$%&'*+/=?^_{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*`)

var looseDateLayouts = []string{
	"Mon, 2 Jan 2006 15:04:05 -0700 (MST)",
	"Mon, 2 Jan 2006 15:04:05 MST",
	"2 Jan 2006 15:04:05 MST",
	"Mon, 2 Jan 2006 15:04 -0700",
	"Mon, 02 Jan 2006 15:04:05 -0700",
	"Mon Jan 2 15:04:05 2006",
	time.RFC3339,
}

func parseLooseDate(v string) (time.Time, error) {
	v = strings.Join(strings.Fields(v), " ")
	for _, l := range looseDateLayouts {
		if t, err := time.Parse(l, v); err == nil {
			return t, nil
		}
	}
	return time.Time{}, errors.New("unparseable date")
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return toValidUTF8(s)
	}
	return toValidUTF8(s[:n]) + "…"
}

// toValidUTF8 keeps valid UTF-8 and reads anything else as Latin-1 (the most likely charset of
// undeclared 8-bit text in German mail).
func toValidUTF8(s string) string {
	if utf8.ValidString(s) {
		return strings.ReplaceAll(s, "\x00", "")
	}
	out, err := charmap.ISO8859_1.NewDecoder().String(s)
	if err != nil {
		return strings.ToValidUTF8(s, "\uFFFD")
	}
	return strings.ReplaceAll(out, "\x00", "")
}

// walkState collects the bodies while walking the MIME tree.
type walkState struct {
	p     *Parsed
	text  strings.Builder
	html  string
	parts int
}

// entity handles one entity (err is what message.New said about it).
func (st *walkState) entity(e *message.Entity, err error, depth int, parentType string) {
	p := st.p
	st.parts++
	if st.parts > maxParts {
		if st.parts == maxParts+1 {
			p.problem("more than %d parts: the rest is skipped", maxParts)
		}
		return
	}
	mediaType, params, ctErr := e.Header.ContentType()
	if ctErr != nil && e.Header.Get("Content-Type") != "" {
		p.problem("malformed Content-Type %q: read as text/plain", truncate(e.Header.Get("Content-Type"), 80))
		mediaType, params = "text/plain", map[string]string{}
	}
	if mediaType == "" {
		mediaType = "text/plain"
		if parentType == "multipart/digest" {
			mediaType = "message/rfc822"
		}
	}
	mediaType = strings.ToLower(mediaType)

	unknownCharset := false
	if err != nil {
		switch {
		case message.IsUnknownCharset(err):
			unknownCharset = true
			p.problem("unknown charset %q: read as UTF-8 or Latin-1", params["charset"])
		case message.IsUnknownEncoding(err):
			p.problem("unknown transfer encoding %q: kept as it is", e.Header.Get("Content-Transfer-Encoding"))
		default:
			p.problem("malformed part: %v", err)
		}
	}

	if strings.HasPrefix(mediaType, "multipart/") {
		if depth >= maxDepth {
			p.problem("multipart nested deeper than %d levels: skipped", maxDepth)
			return
		}
		st.multipart(e, mediaType, params, depth)
		return
	}

	data, rerr := readAllSafe(e.Body)
	if rerr != nil {
		p.problem("part %s: %v (kept what could be read)", mediaType, rerr)
	}
	disp, dparams, _ := e.Header.ContentDisposition()
	disp = strings.ToLower(disp)
	filename := partFilename(dparams, params)
	cid := ""
	if ids := msgIDs(e.Header.Get("Content-Id")); len(ids) > 0 {
		cid = ids[0]
	}

	isBody := disp != "attachment" && filename == ""
	switch {
	case mediaType == "message/delivery-status" || mediaType == "message/global-delivery-status":
		st.deliveryStatus(data)
		if isBody {
			return
		}
	case (mediaType == "text/rfc822-headers" || mediaType == "message/rfc822" || mediaType == "message/global") && parentType == "multipart/report":
		st.reportedMessage(data)
	case isBody && mediaType == "text/plain":
		s := decodeText(data, unknownCharset)
		if st.text.Len() > 0 {
			st.text.WriteString("\n")
		}
		st.text.WriteString(s)
		return
	case isBody && mediaType == "text/html" && st.html == "":
		st.html = decodeText(data, unknownCharset)
		return
	}

	if filename == "" {
		filename = defaultFilename(mediaType, len(p.Attachments)+1)
	}
	p.Attachments = append(p.Attachments, Part{
		Filename:     filename,
		DeclaredType: mediaType,
		ContentID:    cid,
		Inline:       disp == "inline" || (disp == "" && cid != ""),
		Data:         data,
	})
}

// multipart walks the parts of a multipart entity.
func (st *walkState) multipart(e *message.Entity, mediaType string, params map[string]string, depth int) {
	p := st.p
	if params["boundary"] == "" {
		p.problem("%s without boundary: read as text", mediaType)
		data, _ := readAllSafe(e.Body)
		st.text.WriteString(toValidUTF8(string(data)))
		return
	}
	// The body is teed so that a multipart whose boundary never appears (a broken message)
	// still shows its content as text.
	var seen bytes.Buffer
	mr := textproto.NewMultipartReader(io.TeeReader(e.Body, &seen), params["boundary"])
	n := 0
	for {
		tp, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if n == 0 {
				p.problem("malformed %s (no readable part: %v)", mediaType, err)
			} else {
				p.problem("malformed %s after part %d: %v", mediaType, n, err)
			}
			break
		}
		n++
		part, perr := message.New(message.Header{Header: tp.Header}, tp)
		if part == nil {
			p.problem("part %d of %s unreadable: %v", n, mediaType, perr)
			continue
		}
		st.entity(part, perr, depth+1, mediaType)
		if st.parts > maxParts {
			break
		}
	}
	if n == 0 {
		rest, _ := readAllSafe(e.Body)
		seen.Write(rest)
		p.problem("%s without readable parts: the body is kept as text", mediaType)
		if st.text.Len() > 0 {
			st.text.WriteString("\n")
		}
		st.text.WriteString(toValidUTF8(seen.String()))
	}
}

// readAllSafe reads a body; decoders (base64, quoted-printable) may fail half way: what was read
// is kept.
func readAllSafe(r io.Reader) (data []byte, err error) {
	if r == nil {
		return nil, nil
	}
	var buf bytes.Buffer
	_, err = buf.ReadFrom(r)
	return buf.Bytes(), err
}

// decodeText turns a decoded text part into valid UTF-8: when the charset was unknown the bytes
// are still the sender's, kept when valid UTF-8, else read as Latin-1.
func decodeText(b []byte, _ bool) string {
	s := toValidUTF8(string(b))
	return strings.ReplaceAll(s, "\r\n", "\n")
}

// partFilename is the Content-Disposition filename (RFC 2231 decoded by mime), else the
// Content-Type name; RFC 2047 encoded words (non-standard but common) decoded too.
func partFilename(dparams, params map[string]string) string {
	name := dparams["filename"]
	if name == "" {
		name = params["name"]
	}
	if name == "" {
		return ""
	}
	if strings.Contains(name, "=?") {
		dec := mime.WordDecoder{CharsetReader: charset.Reader}
		if d, err := dec.DecodeHeader(name); err == nil {
			name = d
		}
	}
	name = toValidUTF8(name)
	// Only the base name: a filename is never a path.
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	name = strings.Map(func(r rune) rune {
		if r < 32 || r == 127 {
			return -1
		}
		return r
	}, name)
	return strings.TrimSpace(name)
}

func defaultFilename(mediaType string, n int) string {
	ext := ".bin"
	switch {
	case mediaType == "message/rfc822" || mediaType == "message/global":
		ext = ".eml"
	case mediaType == "text/html":
		ext = ".html"
	case mediaType == "text/plain":
		ext = ".txt"
	case mediaType == "text/rfc822-headers":
		ext = ".txt"
	case mediaType == "message/delivery-status" || mediaType == "message/global-delivery-status":
		ext = ".txt"
	default:
		if exts, _ := mime.ExtensionsByType(mediaType); len(exts) > 0 {
			ext = exts[0]
		}
	}
	return fmt.Sprintf("part-%d%s", n, ext)
}
