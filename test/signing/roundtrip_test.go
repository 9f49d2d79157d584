package signing

import (
	"bytes"
	"encoding/json"
	"github.com/brokerdesk/brokerdesk/test/pdftest"
	"strings"
	"testing"

	"github.com/brokerdesk/brokerdesk/app/platform/pdf"
	"github.com/brokerdesk/brokerdesk/test/apitest"
	"github.com/brokerdesk/brokerdesk/test/signing/signingtest"
)

// TestSigning_RoundTrip: a request made through the API is signed by its contact over plain
// HTTP from the mailed link and code, and the sealed PDF is filed: the request is completed
// with signedDocumentId, the document verifies with pdfsig (valid, whole document signed) and
// passes pdfcpu, its audit page names the signer, and one changed byte makes pdfsig refuse it.
// Catches: a link or code that does not work from the mail, a signature stored without the
// request completing (or completing without a document), a seal that does not verify or does
// not cover the stamped and audited PDF, an audit page missing the signer, the event not
// recorded, and a viewed_at never set.
func TestSigning_RoundTrip(t *testing.T) {
	t.Parallel()
	w := signingtest.Setup(t)
	r := newRequest(t, w)
	v := newVisitor(t, w)

	page := v.get(t, r.link)
	if page.status != 200 || !strings.Contains(page.body, "Maklervertrag Erika Muster") ||
		!strings.Contains(page.body, "Code per E-Mail anfordern") {
		t.Fatalf("step 1: %d\n%s", page.status, page.body)
	}
	for h, want := range map[string]string{"Referrer-Policy": "no-referrer", "X-Frame-Options": "DENY",
		"Cache-Control": "no-store"} {
		if got := page.header.Get(h); got != want {
			t.Errorf("%s: %q, want %q", h, got, want)
		}
	}
	if csp := page.header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'nonce-") ||
		!strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("Content-Security-Policy %q", csp)
	}
	if got := w.GetRequest(t, r.b, r.req.ID); got.Signers[0].ViewedAt == nil {
		t.Error("viewedAt not set by the first view")
	}
	pdfAnswer := v.get(t, r.link+"/document.pdf")
	if pdfAnswer.status != 200 || pdfAnswer.header.Get("Content-Type") != "application/pdf" ||
		!strings.HasPrefix(pdfAnswer.header.Get("Content-Disposition"), "inline") || !strings.HasPrefix(pdfAnswer.body, "%PDF-") {
		t.Errorf("document.pdf: %d %v", pdfAnswer.status, pdfAnswer.header)
	}

	v.requestCode(t, r.link)
	code := w.Code(t, r.email, 1)
	csrf := v.signForm(t, r.link)
	a := v.sign(t, r.link, csrf, code, "Erika Muster")
	if a.status != 303 || a.location != r.link+"?step=done" {
		t.Fatalf("sign: %d %q\n%s", a.status, a.location, a.body)
	}
	done := v.get(t, r.link+"?step=done")
	if done.status != 200 || !strings.Contains(done.body, "vollständig unterschrieben") || !strings.Contains(done.body, "signed.pdf") {
		t.Errorf("thank-you page: %d\n%s", done.status, done.body)
	}

	got := w.GetRequest(t, r.b, r.req.ID)
	if got.Status != "completed" || got.SignedDocumentID == nil || got.Signers[0].Status != "signed" {
		t.Fatalf("request after signing: %+v", got)
	}
	signed := documentContent(t, w, r.b.Co.Secret, *got.SignedDocumentID)
	if dl := v.get(t, r.link+"/signed.pdf"); dl.status != 200 || dl.body != string(signed) {
		t.Errorf("signed.pdf: %d, %d bytes, want the filed document's %d", dl.status, len(dl.body), len(signed))
	}

	out, err := pdftest.Run(t, "pdfsig", signed)
	if err != nil || !strings.Contains(out, "Signature is Valid.") || !strings.Contains(out, "Total document signed") {
		t.Errorf("pdfsig (%v):\n%s", err, out)
	}
	if err := pdf.Validate(signed); err != nil {
		t.Errorf("pdfcpu validate: %v", err)
	}
	txt := pdftest.Text(t, signed)
	for _, want := range []string{"Prüfprotokoll", "Erika Muster", r.email} {
		if !strings.Contains(txt, want) {
			t.Errorf("pdftotext lacks %q:\n%s", want, txt)
		}
	}
	tampered := bytes.Clone(signed)
	i := len(tampered) / 3
	tampered[i] ^= 0x01
	if out, err := pdftest.Run(t, "pdfsig", tampered); err == nil && strings.Contains(out, "Signature is Valid.") {
		t.Errorf("pdfsig accepts the PDF with byte %d changed:\n%s", i, out)
	}

	var evs apitest.Page[struct {
		Type string          `json:"type"`
		Data json.RawMessage `json:"data"`
	}]
	ev := w.Env.Do(t, apitest.Request{Path: "/events?types=signature_request.completed", Key: r.b.Co.Secret})
	ev.Decode(t, &evs)
	if len(evs.Data) != 1 || !strings.Contains(string(evs.Data[0].Data), r.req.ID) {
		t.Errorf("signature_request.completed events: %s", ev.Body)
	}
}
