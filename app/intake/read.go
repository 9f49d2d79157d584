package intake

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"mime"
	"mime/multipart"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
)

// Request-level error codes (400 in both shapes, 415 for a type or charset we do not read).
const (
	codeMalformedJSON   = "malformed_json"
	codeMalformedForm   = "malformed_form"
	codeInvalidEncoding = "invalid_encoding"
)

// read parses the body of an intake request by its content type. A body that cannot be read is
// a 400 (errs.BadRequest); an unknown content type or charset is 415. Field problems (a wrong
// JSON type, a file too large) are kept on the Submission for Validate, which runs only after
// the key was checked.
func read(c *fiber.Ctx, lang string) (*Submission, error) {
	mt, params, err := mime.ParseMediaType(c.Get(fiber.HeaderContentType))
	if err != nil {
		return nil, fiber.NewError(fiber.StatusUnsupportedMediaType, msgUnsupportedType(lang))
	}
	body := c.Body()
	switch mt {
	case fiber.MIMEApplicationJSON:
		return readJSON(body, lang)
	case fiber.MIMEApplicationForm:
		return readURLEncoded(body, params["charset"], lang)
	case fiber.MIMEMultipartForm:
		return readMultipart(c, lang)
	}
	return nil, fiber.NewError(fiber.StatusUnsupportedMediaType, msgUnsupportedType(lang))
}

// readJSON reads a JSON object. Unknown members are ignored: website forms send extras
// (consent boxes, captcha tokens), and refusing them would lose leads.
func readJSON(body []byte, lang string) (*Submission, error) {
	body = bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))
	if !utf8.Valid(body) {
		return nil, errs.BadRequest(codeInvalidEncoding, "%s", msgInvalidEncoding(lang))
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil || m == nil {
		return nil, errs.BadRequest(codeMalformedJSON, "%s", msgMalformedJSON(lang))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errs.BadRequest(codeMalformedJSON, "%s", msgMalformedJSON(lang))
	}
	s := &Submission{}
	text := func(field string, dst *string) {
		switch v := m[field].(type) {
		case nil:
		case string:
			if field == "notes" {
				*dst = cleanText(v)
			} else {
				*dst = clean(v)
			}
		case json.Number:
			if field == "phone" { // a phone number sent as a JSON number is still one
				*dst = v.String()
				return
			}
			s.problem(field, codeInvalidType, 0)
		default:
			s.problem(field, codeInvalidType, 0)
		}
	}
	text("firstName", &s.FirstName)
	text("lastName", &s.LastName)
	text("email", &s.Email)
	text("phone", &s.Phone)
	text("notes", &s.Notes)
	text("_redirect", &s.Redirect)
	if v, ok := m["source"].(string); ok {
		s.setSource(v)
	}
	if v, ok := m["_key"].(string); ok {
		s.Key = strings.TrimSpace(v)
	}
	switch v := m["_test"].(type) {
	case bool:
		s.Test = v
	case string:
		s.Test = isTest(v)
	case json.Number:
		s.Test = v.String() == "1"
	}
	if meta, ok := m["_meta"].(map[string]any); ok {
		if u, ok := meta["url"].(string); ok {
			s.setMetaURL(u)
		}
	}
	if u, ok := m["_meta.url"].(string); ok && s.MetaURL == "" {
		s.setMetaURL(u)
	}
	switch af := m["additionalFields"].(type) {
	case nil:
	case map[string]any:
		for k, v := range af {
			k = clean(k)
			switch v := v.(type) {
			case nil:
			case string:
				s.addField(k, cleanText(v))
			case json.Number:
				s.addField(k, v.String())
			case bool:
				if v {
					s.addField(k, "true")
				} else {
					s.addField(k, "false")
				}
			default:
				if validFieldName(k) {
					s.problem("additionalFields."+k, codeInvalidType, 0)
				} else {
					s.addField(k, "") // Validate reports the name
				}
			}
		}
	default:
		s.problem("additionalFields", codeInvalidType, 0)
	}
	return s, nil
}

// readURLEncoded reads an HTML form post. Browsers send form data in the page's encoding and
// never label it, so: the charset parameter when given, else the form's _charset_ field (which
// browsers fill in), else UTF-8 when the bytes are UTF-8 and Windows-1252 (what browsers send for
// ISO-8859-1 pages) when they are not.
func readURLEncoded(body []byte, charset, lang string) (*Submission, error) {
	var pairs [][2]string
	for part := range strings.SplitSeq(string(body), "&") {
		if part == "" {
			continue
		}
		k, v, _ := strings.Cut(part, "=")
		k, err1 := url.QueryUnescape(k)
		v, err2 := url.QueryUnescape(v)
		if err1 != nil || err2 != nil {
			return nil, errs.BadRequest(codeMalformedForm, "%s", msgMalformedForm(lang))
		}
		pairs = append(pairs, [2]string{k, v})
	}
	if charset == "" {
		for _, p := range pairs {
			if p[0] == "_charset_" {
				charset = strings.TrimSpace(p[1])
				break
			}
		}
	}
	dec, ok := decoderFor(charset)
	if !ok {
		return nil, fiber.NewError(fiber.StatusUnsupportedMediaType, msgUnsupportedCharset(lang, charset))
	}
	f := newForm()
	for _, p := range pairs {
		k, ok1 := dec([]byte(p[0]))
		v, ok2 := dec([]byte(p[1]))
		if !ok1 || !ok2 {
			return nil, errs.BadRequest(codeInvalidEncoding, "%s", msgInvalidEncoding(lang))
		}
		f.set(k, v)
	}
	return f.s, nil
}

// readMultipart reads a multipart form: text fields as in readURLEncoded, file parts as
// attachments up to MaxFiles of MaxFileSize each. The server (fasthttp) has parsed the form
// already while reading the request, so the parts come as Go's multipart.Form: per-part headers
// of text fields (a part's own charset) are gone, and fields and files are visited in name order
// so that the result does not depend on map order. Browsers send an empty file input as a part
// without a file name, which the parser turns into an empty text field: it is ignored.
func readMultipart(c *fiber.Ctx, lang string) (*Submission, error) {
	mf, err := c.MultipartForm()
	if err != nil {
		return nil, errs.BadRequest(codeMalformedForm, "%s", msgMalformedForm(lang))
	}
	return readMultipartForm(mf, lang)
}

func readMultipartForm(mf *multipart.Form, lang string) (*Submission, error) {
	charset := ""
	if v := mf.Value["_charset_"]; len(v) > 0 {
		charset = strings.TrimSpace(v[0])
	}
	dec, ok := decoderFor(charset)
	if !ok {
		return nil, fiber.NewError(fiber.StatusUnsupportedMediaType, msgUnsupportedCharset(lang, charset))
	}
	f := newForm()
	for _, name := range slices.Sorted(maps.Keys(mf.Value)) {
		k, ok := dec([]byte(name))
		if !ok {
			return nil, errs.BadRequest(codeInvalidEncoding, "%s", msgInvalidEncoding(lang))
		}
		for _, raw := range mf.Value[name] {
			v, ok := dec([]byte(raw))
			if !ok {
				return nil, errs.BadRequest(codeInvalidEncoding, "%s", msgInvalidEncoding(lang))
			}
			f.set(k, v)
		}
	}
	s := f.s
	files := 0
	for _, name := range slices.Sorted(maps.Keys(mf.File)) {
		for _, fh := range mf.File[name] {
			files++
			switch {
			case files > MaxFiles:
				s.problem(fileProblemPrefix+name, codeTooManyFiles, MaxFiles)
				continue
			case fh.Size > MaxFileSize:
				s.problem(fileProblemPrefix+name, codeFileTooLarge, MaxFileSize)
				continue
			}
			data, err := readFile(fh)
			if err != nil {
				return nil, errs.BadRequest(codeMalformedForm, "%s", msgMalformedForm(lang))
			}
			s.Files = append(s.Files, File{Field: name, Filename: fileName(fh.Filename), ContentType: httpx.SniffType(data),
				DeclaredType: contentType(fh.Header.Get(fiber.HeaderContentType)), Content: data})
		}
	}
	return s, nil
}

func readFile(fh *multipart.FileHeader) ([]byte, error) {
	r, err := fh.Open()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(io.LimitReader(r, MaxFileSize+1))
}

// form maps HTML form field names onto a Submission. The first value of a field wins; repeated
// additional fields (checkbox groups) are joined with ", ". Unknown names are ignored.
type form struct {
	s    *Submission
	seen map[string]bool
}

func newForm() *form { return &form{s: &Submission{}, seen: map[string]bool{}} }

func (f *form) set(name, v string) {
	if name, ok := additionalName(name); ok {
		name, v = clean(name), cleanText(v)
		key := "additionalFields." + name
		if !f.seen[key] {
			f.seen[key] = true
			f.s.addField(name, v)
		} else if old := f.s.AdditionalFields[name]; v != "" {
			f.s.AdditionalFields[name] = strings.TrimPrefix(old+", "+v, ", ")
		}
		return
	}
	if f.seen[name] {
		return
	}
	f.seen[name] = true
	s := f.s
	switch name {
	case "firstName":
		s.FirstName = clean(v)
	case "lastName":
		s.LastName = clean(v)
	case "email":
		s.Email = clean(v)
	case "phone":
		s.Phone = clean(v)
	case "notes":
		s.Notes = cleanText(v)
	case "source":
		s.setSource(v)
	case "_key":
		s.Key = strings.TrimSpace(v)
	case "_redirect":
		s.Redirect = clean(v)
	case "_test":
		s.Test = isTest(v)
	case "_meta.url", "_meta[url]":
		s.setMetaURL(v)
	}
}

// additionalName reads "additionalFields.<name>" and, as jQuery's $.param writes nested
// objects, "additionalFields[<name>]".
func additionalName(k string) (string, bool) {
	if n, ok := strings.CutPrefix(k, "additionalFields."); ok {
		return n, true
	}
	if n, ok := strings.CutPrefix(k, "additionalFields["); ok && strings.HasSuffix(n, "]") {
		return strings.TrimSuffix(n, "]"), true
	}
	return "", false
}

func (s *Submission) addField(k, v string) {
	if s.AdditionalFields == nil {
		s.AdditionalFields = map[string]string{}
	}
	s.AdditionalFields[k] = v
}

func (s *Submission) setSource(v string) {
	v = clean(v)
	if s.Source = normalizeSource(v); s.Source == "" && v != "" {
		s.IgnoredSource = v
	}
}

// setMetaURL keeps an http(s) URL of at most MaxMetaURLLen bytes and drops anything else: the
// page address is metadata, and losing a lead over it would be worse than losing it. The
// fragment is cut off: it is the page's own state (an OAuth implicit-flow token, an app's
// route), never part of an address a server sees, and SDK releases before edf2df943d4c send
// location.href whole (docs/decisions.md "Page address").
func (s *Submission) setMetaURL(v string) {
	v = clean(v)
	if i := strings.IndexByte(v, '#'); i >= 0 {
		v = v[:i]
	}
	u, err := url.Parse(v)
	if err != nil || len(v) > MaxMetaURLLen || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return
	}
	s.MetaURL = v
}

// fileName is the attachment's name as httpx.CleanFilename keeps it, after decoding what the
// browser sent; "attachment" if nothing is left.
func fileName(raw string) string {
	dec, _ := decoderFor("")
	name, _ := dec([]byte(raw))
	return httpx.CleanFilename(name, "attachment")
}

// contentType is the media type the client sent, or application/octet-stream when it sent none
// or something unusable. It is kept in the submission record only: the stored type is sniffed
// from the content (an uploader's claim is not trusted).
func contentType(ct string) string {
	ct = strings.TrimSpace(ct)
	if _, _, err := mime.ParseMediaType(ct); err != nil || len(ct) > 255 || !utf8.ValidString(ct) {
		return "application/octet-stream"
	}
	return ct
}
