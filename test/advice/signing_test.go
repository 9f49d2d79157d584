package advice

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"

	"github.com/brokerdesk/brokerdesk/test/apitest"
	"github.com/brokerdesk/brokerdesk/test/signing/signingtest"
)

// TestAdvice_SignedProtocolLocksRecord (end to end): the protocol is rendered, sent for
// signature, the contact signs on the hosted page (plain HTTP, code from the real mail
// server), and the record is locked in the transaction that completed the request. Catches the
// advice area not registered with the signatures module (or registered but locking nothing:
// the request's documents not read), a record that stays editable after its protocol was
// signed, no advice_record.locked.
func TestAdvice_SignedProtocolLocksRecord(t *testing.T) {
	t.Parallel()
	w := signingtest.Setup(t)
	b := w.NewBroker(t)
	key := b.Co.Secret
	email := signingtest.Address("kunde")
	contact := w.NewContact(t, b, "Jürgen", "Müßig", email)
	rec := apitest.Create[record](t, w.Env, key, "/advice-records", body(contact, map[string]any{"advice": "Hausrat Premium"}))
	doc := apitest.Create[document](t, w.Env, key, "/advice-records/"+rec.ID+"/document", nil)
	req := w.CreateRequest(t, b, map[string]any{"contactId": contact, "title": "Beratungsprotokoll",
		"documents": []map[string]any{{"documentId": doc.ID}}, "signers": []map[string]any{{"role": "contact"}},
		"fields": []map[string]any{{"signer": 0, "page": 1, "x": 0.1, "y": 0.8, "width": 0.35, "height": 0.08}}})
	if got := apitest.Get[record](t, w.Env, key, "/advice-records/"+rec.ID); got.Status != "draft" {
		t.Fatalf("record locked before signing: %+v", got)
	}

	link := w.LinkPath(t, email)
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	call := func(method, path string, form url.Values) (int, string) {
		t.Helper()
		var rd io.Reader
		if form != nil {
			rd = strings.NewReader(form.Encode())
		}
		r, err := http.NewRequest(method, w.Base+path, rd)
		if err != nil {
			t.Fatal(err)
		}
		if form != nil {
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		resp, err := c.Do(r)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	status, page := call("GET", link, nil)
	if status != 200 {
		t.Fatalf("GET %s: %d\n%s", link, status, page)
	}
	if status, page = call("POST", link+"/code", url.Values{"csrf": {signingtest.CSRF(page)[link+"/code"]}}); status != 303 {
		t.Fatalf("POST code: %d\n%s", status, page)
	}
	code := w.Code(t, email, 1)
	if status, page = call("GET", link+"?step=sign", nil); status != 200 {
		t.Fatalf("sign form: %d\n%s", status, page)
	}
	status, page = call("POST", link, url.Values{"csrf": {signingtest.CSRF(page)[link]}, "code": {code},
		"typedName": {"Jürgen Müßig"}, "consent": {"yes"}})
	if status != 303 {
		t.Fatalf("sign: %d\n%s", status, page)
	}
	if got := w.GetRequest(t, b, req.ID); got.Status != "completed" {
		t.Fatalf("request after signing: %+v", got)
	}
	got := apitest.Get[record](t, w.Env, key, "/advice-records/"+rec.ID)
	if got.Status != "locked" || got.LockedAt == nil {
		t.Errorf("record after its protocol was signed: %+v", got)
	}
	if n := apitest.EventsAbout(t, w.Env, key, "advice_record.locked", rec.ID); n != 1 {
		t.Errorf("%d advice_record.locked, want 1", n)
	}
	w.Env.Run(t, []apitest.Case{{Name: "patch after signing", Key: key, Method: "PATCH", Path: "/advice-records/" + rec.ID,
		Body: `{"advice":"anders"}`, Status: 409, Problem: "advice_record_locked"}})
}
