// Package signing tests the hosted signing page of the built-in provider over plain HTTP (a
// net/http client with a cookie jar, as a browser without JavaScript): links and codes from the
// real mail server, the sealed PDF checked with poppler's pdfsig and pdftotext and with pdfcpu.
package signing

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/brokerdesk/brokerdesk/test/apitest"
	"github.com/brokerdesk/brokerdesk/test/signing/signingtest"
)

func TestMain(m *testing.M) { os.Exit(apitest.Main(m)) }

// visitor is a signer's browser: a cookie jar, redirects not followed (the tests look at them).
type visitor struct {
	w *signingtest.World
	c *http.Client
}

func newVisitor(t *testing.T, w *signingtest.World) *visitor {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &visitor{w: w, c: &http.Client{Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// answer is what the page answered.
type answer struct {
	status   int
	body     string
	header   http.Header
	location string
}

func (v *visitor) do(t *testing.T, req *http.Request) answer {
	t.Helper()
	req.Header.Set("User-Agent", "signing-test/1.0 (Go)")
	resp, err := v.c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return answer{status: resp.StatusCode, body: string(b), header: resp.Header, location: resp.Header.Get("Location")}
}

func (v *visitor) get(t *testing.T, path string) answer {
	t.Helper()
	req, err := http.NewRequest("GET", v.w.Base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	return v.do(t, req)
}

func (v *visitor) post(t *testing.T, path string, form url.Values) answer {
	t.Helper()
	req, err := http.NewRequest("POST", v.w.Base+path, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return v.do(t, req)
}

// requestCode loads step 1 and posts its form: 303 to the sign form.
func (v *visitor) requestCode(t *testing.T, link string) {
	t.Helper()
	a := v.get(t, link)
	if a.status != 200 {
		t.Fatalf("GET %s: %d\n%s", link, a.status, a.body)
	}
	tok := signingtest.CSRF(a.body)[link+"/code"]
	r := v.post(t, link+"/code", url.Values{"csrf": {tok}})
	if r.status != 303 || r.location != link+"?step=sign" {
		t.Fatalf("POST code: %d %q\n%s", r.status, r.location, r.body)
	}
}

// signForm loads the sign form and returns its csrf field.
func (v *visitor) signForm(t *testing.T, link string) string {
	t.Helper()
	a := v.get(t, link+"?step=sign")
	if a.status != 200 {
		t.Fatalf("GET sign form: %d\n%s", a.status, a.body)
	}
	tok := signingtest.CSRF(a.body)[link]
	if tok == "" {
		t.Fatalf("no csrf field in the sign form:\n%s", a.body)
	}
	return tok
}

// sign posts the sign form with a typed name.
func (v *visitor) sign(t *testing.T, link, csrf, code, name string) answer {
	t.Helper()
	return v.post(t, link, url.Values{"csrf": {csrf}, "code": {code}, "typedName": {name}, "consent": {"yes"}})
}

// request is a request of one contact signer over one uploaded document, with a field on page 1.
type request struct {
	b       *signingtest.Broker
	contact string
	email   string
	req     signingtest.Request
	link    string
}

// newRequest creates a broker, a contact (Erika Muster) with a document and a request for her
// signature (plus extra signers) and returns it with the contact's link path.
func newRequest(t *testing.T, w *signingtest.World, extra ...map[string]any) request {
	t.Helper()
	b := w.NewBroker(t)
	email := signingtest.Address("erika")
	contact := w.NewContact(t, b, "Erika", "Muster", email)
	doc := w.UploadPDF(t, b, contact, "Maklervertrag.pdf",
		"# Maklervertrag\nZwischen Erika Muster und der Maklerfirma.\n\nDie Maklerin berät zu Versicherungen.")
	signers := []map[string]any{{"role": "contact"}}
	fields := []map[string]any{{"signer": 0, "page": 1, "x": 0.1, "y": 0.7, "width": 0.35, "height": 0.08}}
	for i, e := range extra {
		signers = append(signers, e)
		fields = append(fields, map[string]any{"signer": i + 1, "page": 1, "x": 0.55, "y": 0.7, "width": 0.35, "height": 0.08})
	}
	r := w.CreateRequest(t, b, map[string]any{"contactId": contact, "title": "Maklervertrag Erika Muster",
		"message": "Bitte unterschreiben Sie den Maklervertrag.", "documents": []map[string]any{{"documentId": doc}},
		"signers": signers, "fields": fields})
	return request{b: b, contact: contact, email: email, req: r, link: w.LinkPath(t, email)}
}

// documentContent downloads a document's content through the API.
func documentContent(t *testing.T, w *signingtest.World, key, id string) []byte {
	t.Helper()
	r := w.Env.Do(t, apitest.Request{Path: "/documents/" + id + "/content", Key: key})
	if r.Status != 200 {
		t.Fatalf("GET document content: %d %s", r.Status, r.Body)
	}
	return r.Body
}
