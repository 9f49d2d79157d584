package signing

import (
	"bytes"
	"context"
	"encoding/base64"
	"github.com/brokerdesk/brokerdesk/test/pdftest"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/blobstore"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/document"
	"github.com/brokerdesk/brokerdesk/ent/signaturesigner"
	"github.com/brokerdesk/brokerdesk/test/apitest"
	"github.com/brokerdesk/brokerdesk/test/signing/signingtest"
)

// pngURL is a data URL of a w×h PNG; ink draws a line on it (else it is blank).
func pngURL(t *testing.T, w, h int, ink bool) string {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	if ink {
		for x := 0; x < w; x++ {
			img.Set(x, h/2, color.NRGBA{0, 0, 80, 255})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return "data:image/png;base64," + base64.StdEncoding.EncodeToString(b.Bytes())
}

// TestSigning_Form: the sign form is refused with nothing signed and the code kept when its
// CSRF field is missing or was made for another browser (403), when it has no signature, no
// consent, a drawing that is not a PNG, too large or blank (422, the message linked to the
// input); then a drawn PNG signs. Catches: a form posted from another browser or site that
// signs, a signature stored without consent or without an image, a PNG bomb decoded whole, a
// refusal that burns the code, and a drawn signature refused or lost.
func TestSigning_Form(t *testing.T) {
	t.Parallel()
	w := signingtest.Setup(t)
	r := newRequest(t, w)
	v := newVisitor(t, w)
	v.requestCode(t, r.link)
	code := w.Code(t, r.email, 1)
	csrf := v.signForm(t, r.link)
	good := url.Values{"csrf": {csrf}, "code": {code}, "typedName": {"Erika Muster"}, "consent": {"yes"}}
	with := func(k, val string) url.Values {
		f := url.Values{}
		for kk, vv := range good {
			f[kk] = vv
		}
		if val == "" {
			f.Del(k)
		} else {
			f.Set(k, val)
		}
		return f
	}

	wantPage(t, "no csrf", v.post(t, r.link, with("csrf", "")), 403, "Seite neu")
	other := newVisitor(t, w) // another browser: its own cookie, the first one's form field
	other.get(t, r.link)
	wantPage(t, "csrf of another browser", other.post(t, r.link, good), 403, "Seite neu")
	bare := newVisitor(t, w) // no cookie at all
	wantPage(t, "no cookie", bare.post(t, r.link, good), 403, "Seite neu")
	codeForm := signingtest.CSRF(v.get(t, r.link+"?step=sign").body)[r.link+"/code"]
	wantPage(t, "csrf of the code form", v.post(t, r.link, with("csrf", codeForm)), 403, "Seite neu")

	for _, c := range []struct {
		name, text string
		form       url.Values
	}{
		{"no signature", "Bitte unterschreiben Sie", with("typedName", "")},
		{"no consent", "Bitte bestätigen Sie", with("consent", "")},
		{"digits for a name", "in Buchstaben", with("typedName", "12345")},
		{"not a PNG", "nicht gelesen", func() url.Values {
			f := with("typedName", "")
			f.Set("signature", "data:image/png;base64,"+base64.StdEncoding.EncodeToString([]byte("GIF89a not a png")))
			return f
		}()},
		{"PNG too wide", "zu groß", func() url.Values { f := with("typedName", ""); f.Set("signature", pngURL(t, 2001, 10, true)); return f }()},
		{"PNG over 1 MB", "zu groß", func() url.Values {
			f := with("typedName", "")
			f.Set("signature", "data:image/png;base64,"+strings.Repeat("A", 1500000))
			return f
		}()},
		{"blank PNG", "leer", func() url.Values {
			f := with("typedName", "")
			f.Set("signature", pngURL(t, 600, 200, false))
			return f
		}()},
	} {
		a := v.post(t, r.link, c.form)
		wantPage(t, c.name, a, 422, c.text)
		if !strings.Contains(a.body, `aria-invalid="true"`) {
			t.Errorf("%s: no input marked invalid", c.name)
		}
	}
	if s := signerRow(t, w, r.b.Co.ID, r.req.Signers[0].ID); s.Status != signaturesigner.StatusPending || s.CodeAttempts != 0 {
		t.Fatalf("after refused forms: status %s, %d code attempts (a right code must not count)", s.Status, s.CodeAttempts)
	}

	drawn := with("typedName", "")
	drawn.Set("signature", pngURL(t, 600, 200, true))
	if a := v.post(t, r.link, drawn); a.status != 303 {
		t.Fatalf("sign with a drawing: %d\n%s", a.status, a.body)
	}
	s := signerRow(t, w, r.b.Co.ID, r.req.Signers[0].ID)
	if s.Status != signaturesigner.StatusSigned || s.Signature == nil || !bytes.HasPrefix(*s.Signature, []byte("\x89PNG")) ||
		s.SignedIP != "127.0.0.1" || s.SignedUserAgent != "signing-test/1.0 (Go)" || s.VerifiedAt == nil {
		t.Errorf("signer after a drawn signature: status %s, ip %q, ua %q, verified %v", s.Status, s.SignedIP, s.SignedUserAgent, s.VerifiedAt)
	}
}

// TestSigning_TwoSignersAtOnce: two signers submit at the same moment; both signatures are
// stored, the request is completed once, with exactly one signed document whose audit page
// names both, and one completed event. Catches: the last-signer check run by both
// transactions without a lock (two documents, or none when each sees the other pending), and a
// finalize that misses the signature committed concurrently.
func TestSigning_TwoSignersAtOnce(t *testing.T) {
	t.Parallel()
	w := signingtest.Setup(t)
	maxEmail := signingtest.Address("max")
	r := newRequest(t, w, map[string]any{"role": "other", "name": "Max Mustermann", "email": maxEmail})
	maxLink := w.LinkPath(t, maxEmail)
	erika, max := newVisitor(t, w), newVisitor(t, w)
	erika.requestCode(t, r.link)
	max.requestCode(t, maxLink)
	forms := []struct {
		v    *visitor
		link string
		form url.Values
	}{
		{erika, r.link, url.Values{"csrf": {erika.signForm(t, r.link)}, "code": {w.Code(t, r.email, 1)},
			"typedName": {"Erika Muster"}, "consent": {"yes"}}},
		{max, maxLink, url.Values{"csrf": {max.signForm(t, maxLink)}, "code": {w.Code(t, maxEmail, 1)},
			"typedName": {"Max Mustermann"}, "consent": {"yes"}}},
	}
	status := make([]int, len(forms))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, f := range forms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest("POST", w.Base+f.link, strings.NewReader(f.form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			<-start
			resp, err := f.v.c.Do(req)
			if err != nil {
				return
			}
			resp.Body.Close()
			status[i] = resp.StatusCode
		}()
	}
	close(start)
	wg.Wait()
	if status[0] != 303 || status[1] != 303 {
		t.Fatalf("answers %v, want both 303", status)
	}

	got := w.GetRequest(t, r.b, r.req.ID)
	if got.Status != "completed" || got.SignedDocumentID == nil {
		t.Fatalf("request after both signed: %+v", got)
	}
	var signedDocs int
	w.Env.InCompany(t, r.b.Co.ID, func(ctx context.Context, db *ent.Client) error {
		var err error
		signedDocs, err = db.Document.Query().Where(document.FilenameContains("unterschrieben")).Count(ctx)
		return err
	})
	if signedDocs != 1 {
		t.Errorf("%d signed documents, want 1", signedDocs)
	}
	txt := pdftest.Text(t, documentContent(t, w, r.b.Co.Secret, *got.SignedDocumentID))
	for _, name := range []string{"Erika Muster", "Max Mustermann", maxEmail} {
		if !strings.Contains(txt, name) {
			t.Errorf("the signed PDF lacks %q:\n%s", name, txt)
		}
	}
	ev := w.Env.Do(t, apitest.Request{Path: "/events?types=signature_request.completed", Key: r.b.Co.Secret})
	if n := strings.Count(string(ev.Body), `"type":"signature_request.completed"`); n != 1 {
		t.Errorf("%d completed events, want 1: %s", n, ev.Body)
	}
}

// TestSigning_TamperedSource: when the stored PDF no longer has the hash the signers were
// shown, the last signature fails with the page saying to try again, and nothing is kept: the
// signer is still pending, the request pending, no document filed. Catches: a document sealed
// over content nobody saw, and a failed finalize that leaves the signature (or a half-completed
// request) behind.
func TestSigning_TamperedSource(t *testing.T) {
	t.Parallel()
	w := signingtest.Setup(t)
	r := newRequest(t, w)
	var key string
	w.Env.InCompany(t, r.b.Co.ID, func(ctx context.Context, db *ent.Client) error {
		sr, err := db.SignatureRequest.Get(ctx, uuid.MustParse(r.req.ID))
		key = sr.SourceBlobKey
		return err
	})
	bucket, err := blobstore.Open(context.Background(), w.Env.Config.BlobURL)
	if err != nil {
		t.Fatal(err)
	}
	defer bucket.Close()
	src, err := bucket.ReadAll(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	src = append(src, "% a line added after the request was made\n"...) // still a PDF, another hash
	if err := bucket.WriteAll(context.Background(), key, src, nil); err != nil {
		t.Fatal(err)
	}

	v := newVisitor(t, w)
	v.requestCode(t, r.link)
	code := w.Code(t, r.email, 1)
	csrf := v.signForm(t, r.link)
	wantPage(t, "sign over a changed source", v.sign(t, r.link, csrf, code, "Erika Muster"), 500, "erneut")
	got := w.GetRequest(t, r.b, r.req.ID)
	if got.Status != "pending" || got.Signers[0].Status != "pending" || got.SignedDocumentID != nil {
		t.Errorf("after a failed finalize: %+v", got)
	}
	var docs int
	w.Env.InCompany(t, r.b.Co.ID, func(ctx context.Context, db *ent.Client) error {
		docs, err = db.Document.Query().Count(ctx)
		return err
	})
	if docs != 1 {
		t.Errorf("%d documents, want only the source", docs)
	}
}
