package intake

import (
	"bytes"
	"errors"
	"mime/multipart"
	"net/textproto"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/brokerdesk/brokerdesk/app/leads"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
)

// TestBounds: whatever the intake stores must be a valid lead for the API (app/leads).
func TestBounds(t *testing.T) {
	if MaxNotesLen > leads.MaxNotes || MaxFields > leads.MaxAdditional || MaxFieldNameLen > leads.MaxAdditionalKey ||
		MaxFieldValueLen > leads.MaxAdditionalValue {
		t.Errorf("the intake's bounds exceed the lead board's")
	}
}

func TestRedirectURL(t *testing.T) {
	domains := []string{"example.com", "localhost"}
	for _, c := range []struct {
		in   string
		want string // "" = refused
	}{
		{"https://example.com/danke", "https://example.com/danke"},
		{"http://www.example.com:8080/a?b=c#d", "http://www.example.com:8080/a?b=c#d"},
		{"HTTPS://Shop.Example.COM/x", "https://Shop.Example.COM/x"},
		{"http://localhost:8082/danke", "http://localhost:8082/danke"},
		{"https://example.com/danke-schön", "https://example.com/danke-sch%C3%B6n"},
		{"https://evil.example/", ""},
		{"//example.com/danke", ""},
		{"/danke", ""},
		{"example.com/danke", ""},
		{"https://example.com.evil.example/", ""},
		{"https://badexample.com/", ""},
		{"http://127.0.0.1:8082@evil.example/", ""},
		{"https://example.com@evil.example/", ""},
		{"https://user@example.com/", ""},
		{"javascript:alert(1)", ""},
		{"javascript://example.com/%0aalert(1)", ""},
		{"ftp://example.com/", ""},
		{"https://exämple.com/", ""},
		{"https://example.com\\@evil.example", ""},
		{"https://example.com /", ""},
		{"https://example.com/\nx", ""},
		{"https:example.com", ""},
		{"https://", ""},
		{"https://example.com./", ""},
		{"https://[::1]/", ""},
		{"", ""},
	} {
		got, ok := redirectURL(c.in, domains)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("redirectURL(%q) = %q, %v; want %q", c.in, got, ok, c.want)
		}
	}
	if _, ok := redirectURL("https://example.com/", nil); ok {
		t.Errorf("a key without domains redirected")
	}
}

func TestOriginAllowed(t *testing.T) {
	domains := []string{"example.com"}
	for _, c := range []struct {
		origin string
		want   bool
	}{
		{"", true},
		{"https://example.com", true},
		{"https://www.example.com", true},
		{"http://example.com:3000", true},
		{"https://example.com/", true},
		{"null", false},
		{"https://evil.example", false},
		{"https://notexample.com", false},
		{"https://example.com.evil.example", false},
		{"file://", false},
		{"chrome-extension://abc", false},
	} {
		if got := originAllowed(c.origin, domains); got != c.want {
			t.Errorf("originAllowed(%q) = %v, want %v", c.origin, got, c.want)
		}
	}
	if !originAllowed("https://evil.example", nil) {
		t.Errorf("a key without domains refused an origin")
	}
}

func TestDecoderFor(t *testing.T) {
	for _, c := range []struct {
		charset string
		in      string
		want    string
		ok      bool
	}{
		{"", "Jürgen", "Jürgen", true},
		{"", "J\xfcrgen", "Jürgen", true},
		{"", "\x80 \x84\x93", "€ „“", true},
		{"UTF-8", "Jürgen", "Jürgen", true},
		{"utf-8", "J\xfcrgen", "", false},
		{"ISO-8859-1", "M\xfcller", "Müller", true},
		{"latin1", "\xdf", "ß", true},
		{"windows-1252", "\x96", "–", true},
	} {
		dec, ok := decoderFor(c.charset)
		if !ok {
			t.Fatalf("decoderFor(%q) unknown", c.charset)
		}
		got, ok := dec([]byte(c.in))
		if ok != c.ok || (ok && got != c.want) {
			t.Errorf("%q %q: got %q %v, want %q %v", c.charset, c.in, got, ok, c.want, c.ok)
		}
	}
	for _, cs := range []string{"koi8-r", "utf-16", "shift_jis"} {
		if _, ok := decoderFor(cs); ok {
			t.Errorf("decoderFor(%q) accepted", cs)
		}
	}
}

func TestReadJSON(t *testing.T) {
	s, err := readJSON([]byte(`{"firstName":" Jürgen\u0000 ","lastName":"M","email":"a@b.de","phone":491701234567,
		"source":"Website","notes":"n","additionalFields":{"a":"x","n":3,"b":true,"z":null,"":"v"},
		"_meta":{"url":"https://example.com/p"},"_key":" pk_live_x ","_redirect":"https://example.com","_test":"1","extra":[1]}`), "en")
	if err != nil {
		t.Fatal(err)
	}
	want := &Submission{FirstName: "Jürgen", LastName: "M", Email: "a@b.de", Phone: "491701234567", Source: "website",
		Notes: "n", AdditionalFields: map[string]string{"a": "x", "n": "3", "b": "true", "": "v"}, MetaURL: "https://example.com/p",
		Key: "pk_live_x", Redirect: "https://example.com", Test: true}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("got %+v\nwant %+v", s, want)
	}

	s, err = readJSON([]byte(`{"firstName":1,"email":{},"additionalFields":{"x":{"y":1}},"source":"tv","_meta":{"url":"javascript:x"},"_test":"yes"}`), "en")
	if err != nil {
		t.Fatal(err)
	}
	err = s.Validate(nil, "en")
	var inv *errs.Invalid
	if !errors.As(err, &inv) {
		t.Fatalf("got %v", err)
	}
	got := []string{}
	for _, e := range inv.Errors {
		got = append(got, e.Field+" "+e.Code+" "+e.Detail)
	}
	wantErrs := []string{
		"firstName invalid_type First name must be text",
		"lastName required Last name is required",
		"email invalid_type Email must be text",
		`additionalFields.x invalid_type Additional field "x" must be text, a number or true/false`,
	}
	if !reflect.DeepEqual(got, wantErrs) {
		t.Errorf("errors\n%v\nwant\n%v", strings.Join(got, "\n"), strings.Join(wantErrs, "\n"))
	}
	if s.Source != "" || s.IgnoredSource != "tv" || s.MetaURL != "" || s.Test {
		t.Errorf("got %+v", s)
	}

	for _, body := range []string{``, `[]`, `null`, `"x"`, `{"a":1}{}`, `{"a":`, "{\"a\":\"\xff\"}"} {
		if _, err := readJSON([]byte(body), "en"); !errors.Is(err, errs.ErrBadRequest) {
			t.Errorf("%q: %v, want a bad request", body, err)
		}
	}
}

// TestSetMetaURL: the page address is kept as sent, but never with a fragment (issue 20 item 9:
// SDK releases before edf2df943d4c send location.href, and a fragment holds what a page keeps
// to itself, such as an OAuth implicit-flow token; no server ever receives one for a page).
// A query is kept: a site that writes its address with one into _meta.url chose to send it.
func TestSetMetaURL(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"https://www.example.com/kontakt", "https://www.example.com/kontakt"},
		{"https://www.example.com/kontakt?utm_source=nl", "https://www.example.com/kontakt?utm_source=nl"},
		{"https://www.example.com/kontakt?utm_source=nl#access_token=abc", "https://www.example.com/kontakt?utm_source=nl"},
		{"https://www.example.com/#/angebot/42", "https://www.example.com/"},
		{"https://www.example.com/kontakt#", "https://www.example.com/kontakt"},
		{"#frag", ""},
		{"javascript:alert(1)", ""},
		{"https://" + strings.Repeat("a", MaxMetaURLLen) + ".example/", ""},
	} {
		var s Submission
		s.setMetaURL(c.in)
		if s.MetaURL != c.want {
			t.Errorf("setMetaURL(%q): %q, want %q", c.in, s.MetaURL, c.want)
		}
	}
}

func TestReadURLEncoded(t *testing.T) {
	s, err := readURLEncoded([]byte("firstName=J%FCrgen&lastName=M%FCller&firstName=Other&additionalFields.a=1"+
		"&additionalFields%5Bb%5D=2&additionalFields.c=x&additionalFields.c=y&additionalFields.c=&_meta.url=https%3A%2F%2Fe.de%2F&_test=true&submit=Senden"), "", "en")
	if err != nil {
		t.Fatal(err)
	}
	want := &Submission{FirstName: "Jürgen", LastName: "Müller", MetaURL: "https://e.de/", Test: true,
		AdditionalFields: map[string]string{"a": "1", "b": "2", "c": "x, y"}}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("got %+v\nwant %+v", s, want)
	}
	if _, err := readURLEncoded([]byte("a=%zz"), "", "en"); !errors.Is(err, errs.ErrBadRequest) {
		t.Errorf("broken escape: %v", err)
	}
	if _, err := readURLEncoded([]byte("a=%FC"), "utf-8", "en"); !errors.Is(err, errs.ErrBadRequest) {
		t.Errorf("Latin-1 labelled UTF-8: %v", err)
	}
	if _, err := readURLEncoded([]byte("_charset_=koi8-r&a=b"), "", "en"); err == nil {
		t.Errorf("KOI8-R accepted")
	}
}

func TestReadMultipartForm(t *testing.T) {
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	_ = w.WriteField("_charset_", "ISO-8859-1")
	_ = w.WriteField("firstName", "J\xfcrgen")
	part := func(field, filename, ct string, n int) {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", `form-data; name="`+field+`"; filename="`+filename+`"`)
		if ct != "" {
			h.Set("Content-Type", ct)
		}
		p, _ := w.CreatePart(h)
		_, _ = p.Write(bytes.Repeat([]byte("x"), n))
	}
	part("a", `C:\fakepath\Brief.pdf`, "application/pdf", 10)
	part("b", "big.bin", "", MaxFileSize+1)
	for range 5 {
		part("c", "x.txt", "text/plain", 1)
	}
	_ = w.Close()
	mf, err := multipart.NewReader(&buf, w.Boundary()).ReadForm(32 << 20)
	if err != nil {
		t.Fatal(err)
	}
	s, err := readMultipartForm(mf, "de")
	if err != nil {
		t.Fatal(err)
	}
	// The stored type is sniffed: ten x are text, whatever the part claimed.
	if s.FirstName != "Jürgen" || len(s.Files) != 4 || s.Files[0].Filename != "Brief.pdf" ||
		s.Files[0].ContentType != "text/plain; charset=utf-8" || s.Files[0].DeclaredType != "application/pdf" {
		t.Errorf("got %+v", s)
	}
	err = s.Validate(nil, "de")
	var inv *errs.Invalid
	if !errors.As(err, &inv) {
		t.Fatalf("got %v", err)
	}
	want := []errs.FieldError{
		{Field: "lastName", Code: "required", Detail: "Nachname ist erforderlich"},
		{Field: "", Code: "email_or_phone_required", Detail: "E-Mail oder Telefon ist erforderlich"},
		{Field: "b", Code: "file_too_large", Detail: "Die Datei ist größer als 5 MB"},
		{Field: "c", Code: "too_many_files", Detail: "Höchstens 5 Dateien sind erlaubt"},
	}
	if !reflect.DeepEqual(inv.Errors, want) {
		t.Errorf("errors %+v\nwant %+v", inv.Errors, want)
	}
}

func TestValidate_AdditionalFields(t *testing.T) {
	base := Submission{FirstName: "A", LastName: "B", Email: "a@b.de"}
	many := map[string]string{}
	for i := range MaxFields + 1 {
		many[strings.Repeat("k", i+1)] = "v"
	}
	for _, c := range []struct {
		fields map[string]string
		want   string
	}{
		{map[string]string{"a": strings.Repeat("v", MaxFieldValueLen)}, ""},
		{map[string]string{"a": strings.Repeat("v", MaxFieldValueLen+1)}, "additionalFields.a too_long"},
		{map[string]string{strings.Repeat("k", MaxFieldNameLen+1): "v"}, "additionalFields invalid_field_name"},
		{map[string]string{"": "v"}, "additionalFields invalid_field_name"},
		{map[string]string{"a\nb": "v"}, "additionalFields invalid_field_name"},
		{many, "additionalFields too_many_fields"},
	} {
		s := base
		s.AdditionalFields = c.fields
		got := ""
		var inv *errs.Invalid
		if err := s.Validate(nil, "en"); errors.As(err, &inv) {
			got = inv.Errors[0].Field + " " + inv.Errors[0].Code
		}
		if got != c.want {
			t.Errorf("%d fields: got %q, want %q", len(c.fields), got, c.want)
		}
	}
}

func TestValidEmail(t *testing.T) {
	for in, want := range map[string]bool{
		"a@b.de": true, "jürgen@müller.de": true, "a.b+c@sub.example.com": true,
		"a@b": false, "a@.de": false, "a@b.de.": false, "<a@b.de>": false, "A <a@b.de>": false, "a b@c.de": false,
		"a@@b.de": false, "@b.de": false, "a": false,
	} {
		if got := validEmail(in); got != want {
			t.Errorf("validEmail(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestAppendNote(t *testing.T) {
	at := time.Date(2026, 7, 1, 10, 0, 5, 0, time.UTC)
	if got := appendNote("", "n", at); got != "--- 2026-07-01 12:00:05 +02:00 ---\nn" {
		t.Errorf("got %q", got)
	}
	if got := appendNote("old", "n", at); got != "old\n\n--- 2026-07-01 12:00:05 +02:00 ---\nn" {
		t.Errorf("got %q", got)
	}
}

func TestFileName(t *testing.T) {
	for in, want := range map[string]string{
		`C:\fakepath\Brief.pdf`: "Brief.pdf", "../../etc/passwd": "passwd", "a\x00b.txt": "ab.txt", "": "attachment",
		"..": "attachment", "M\xe4rz.pdf": "März.pdf", strings.Repeat("ä", 300): strings.Repeat("ä", 255),
	} {
		if got := fileName(in); got != want {
			t.Errorf("fileName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestClean(t *testing.T) {
	for _, c := range []struct{ in, line, text string }{
		{"  Anna ", "Anna", "Anna"},
		{"\u202eannA\u202c", "annA", "annA"},                                                      // bidi override and pop
		{"An\u200bna\u200d", "Anna", "Anna"},                                                      // zero-width space and joiner
		{"\ufeffAnna\u2066x\u2069", "Annax", "Annax"},                                             // BOM, isolates
		{"An\x00na\x07\x1b[31m", "Anna[31m", "Anna[31m"},                                          // NUL, BEL, ESC
		{"An\u0085na\u009b", "Anna", "Anna"},                                                      // C1 controls
		{"Zeile 1\r\nZeile 2\rZeile 3\n", "Zeile 1 Zeile 2 Zeile 3", "Zeile 1\nZeile 2\nZeile 3"}, // line breaks
		{"a\u2028b\u2029c", "a b c", "a\nb\nc"},
		{"a\tb", "a b", "a b"},
		{"Müller-Lüdenscheidt 😀", "Müller-Lüdenscheidt 😀", "Müller-Lüdenscheidt 😀"},
	} {
		if got := clean(c.in); got != c.line {
			t.Errorf("clean(%q) = %q, want %q", c.in, got, c.line)
		}
		if got := cleanText(c.in); got != c.text {
			t.Errorf("cleanText(%q) = %q, want %q", c.in, got, c.text)
		}
	}
	if got := fileName("rechnung\u202efdp.exe"); got != "rechnungfdp.exe" {
		t.Errorf("fileName with U+202E = %q", got)
	}
	s, err := readJSON([]byte(`{"firstName":"\u202eAnna","lastName":"B\u200berger","notes":"a\r\nb\u202e","additionalFields":{"x\u200b":"1\r\n2\u0007"}}`), "en")
	if err != nil {
		t.Fatal(err)
	}
	if s.FirstName != "Anna" || s.LastName != "Berger" || s.Notes != "a\nb" || s.AdditionalFields["x"] != "1\n2" {
		t.Errorf("JSON read %+v", s)
	}
	s, err = readURLEncoded([]byte("firstName=%E2%80%AEAnna&notes=a%0D%0Ab%E2%80%8B&additionalFields.x%E2%80%8B=%C2%85v"), "", "en")
	if err != nil {
		t.Fatal(err)
	}
	if s.FirstName != "Anna" || s.Notes != "a\nb" || s.AdditionalFields["x"] != "v" {
		t.Errorf("form read %+v", s)
	}
}

func TestAddMissing(t *testing.T) {
	got := addMissing(map[string]string{"interest": "BU", "budget": "100"},
		map[string]string{"interest": "KV", "callback": "morgens", "empty": ""})
	want := map[string]string{"interest": "BU", "budget": "100", "callback": "morgens"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}
