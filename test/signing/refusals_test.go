package signing

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/email"
	"github.com/brokerdesk/brokerdesk/ent/signaturerequest"
	"github.com/brokerdesk/brokerdesk/ent/signaturesigner"
	"github.com/brokerdesk/brokerdesk/test/apitest"
	"github.com/brokerdesk/brokerdesk/test/signing/signingtest"
)

// linkToken makes a correctly MACed link token for any company and signer, as the server
// would (token.go): the tests know the test secret. It lets a test present a link that passes
// the MAC but names a signer of another company, which only the database layers can refuse.
func linkToken(company, signer uuid.UUID) string {
	key := hmac.New(sha256.New, []byte(apitest.TestSecret))
	key.Write([]byte("brokerdesk signature link v1"))
	b := append(append([]byte{}, company[:]...), signer[:]...)
	mac := hmac.New(sha256.New, key.Sum(nil))
	mac.Write(b)
	return base64.RawURLEncoding.EncodeToString(mac.Sum(b))
}

// wantPage fails unless a is an HTML page of status containing text.
func wantPage(t *testing.T, what string, a answer, status int, text string) {
	t.Helper()
	if a.status != status || !strings.HasPrefix(a.header.Get("Content-Type"), "text/html") || !strings.Contains(a.body, text) {
		t.Errorf("%s: %d %s, want an HTML page %d with %q:\n%.1500s", what, a.status, a.header.Get("Content-Type"), status, text, a.body)
	}
}

// signerRow reads a signer below the API.
func signerRow(t *testing.T, w *signingtest.World, company uuid.UUID, id string) *ent.SignatureSigner {
	t.Helper()
	var s *ent.SignatureSigner
	w.Env.InCompany(t, company, func(ctx context.Context, db *ent.Client) error {
		var err error
		s, err = db.SignatureSigner.Get(ctx, uuid.MustParse(id))
		return err
	})
	return s
}

// TestSigning_UnknownLinks: a forged or truncated token, and a correctly MACed token naming
// another company's signer, get the 404 page on every route, and nothing of the other
// company's request changes. Catches: a token accepted without its MAC, a signer read outside
// the company the token names (the company transaction, row-level security and the ent rules
// must all hide it), and a problem+json or 500 instead of a page.
func TestSigning_UnknownLinks(t *testing.T) {
	t.Parallel()
	w := signingtest.Setup(t)
	a := newRequest(t, w)
	b := newRequest(t, w)
	v := newVisitor(t, w)
	tok := strings.TrimPrefix(a.link, "/sign/")
	forged := []byte(tok)
	forged[20] ^= 0x01
	if forged[20] == '-' || forged[20] == '_' {
		forged[20] = 'A'
	}
	otherSigner := uuid.MustParse(b.req.Signers[0].ID)
	cross := "/sign/" + linkToken(a.b.Co.ID, otherSigner)
	for name, link := range map[string]string{"forged": "/sign/" + string(forged), "truncated": a.link[:40],
		"garbage": "/sign/abc", "other company's signer": cross} {
		wantPage(t, name+" GET", v.get(t, link), 404, "Link nicht gefunden")
		wantPage(t, name+" document", v.get(t, link+"/document.pdf"), 404, "Link nicht gefunden")
		if link == cross {
			// Its MAC is the server's: a POST without the form's CSRF field stops there (403).
			wantPage(t, name+" sign", v.post(t, link, nil), 403, "Seite neu")
			continue
		}
		wantPage(t, name+" code", v.post(t, link+"/code", nil), 404, "Link nicht gefunden")
		wantPage(t, name+" sign", v.post(t, link, nil), 404, "Link nicht gefunden")
	}
	if s := signerRow(t, w, b.b.Co.ID, b.req.Signers[0].ID); s.ViewedAt != nil || s.CodeSentAt != nil {
		t.Errorf("the other company's signer was touched: viewed %v, code sent %v", s.ViewedAt, s.CodeSentAt)
	}
}

// TestSigning_ClosedRequests: the links of a cancelled, an expired (also one past expiresAt
// that no job marked yet) and a completed request answer 410 on every route, and a replayed
// sign form after completion signs nothing. Catches: a link that outlives cancel or expiry,
// a request past its expiry still signable until the job runs, a replay that signs (or
// finalizes) twice, and the download link missing on the completed page.
func TestSigning_ClosedRequests(t *testing.T) {
	t.Parallel()
	w := signingtest.Setup(t)

	t.Run("cancelled", func(t *testing.T) {
		r := newRequest(t, w)
		v := newVisitor(t, w)
		v.requestCode(t, r.link)
		code := w.Code(t, r.email, 1)
		csrf := v.signForm(t, r.link)
		if c := w.Env.Do(t, apitest.Request{Method: "POST", Path: "/signature-requests/" + r.req.ID + "/cancel",
			Key: r.b.Co.Secret}); c.Status != 200 {
			t.Fatalf("cancel: %d %s", c.Status, c.Body)
		}
		wantPage(t, "GET", v.get(t, r.link), 410, "nicht mehr gültig")
		wantPage(t, "document", v.get(t, r.link+"/document.pdf"), 410, "zurückgezogen")
		wantPage(t, "sign", v.sign(t, r.link, csrf, code, "Erika Muster"), 410, "zurückgezogen")
		if s := signerRow(t, w, r.b.Co.ID, r.req.Signers[0].ID); s.Status != signaturesigner.StatusPending {
			t.Errorf("signer %s after signing a cancelled request", s.Status)
		}
	})

	t.Run("past expiresAt", func(t *testing.T) {
		r := newRequest(t, w)
		v := newVisitor(t, w)
		v.requestCode(t, r.link)
		code := w.Code(t, r.email, 1)
		csrf := v.signForm(t, r.link)
		// expires_at passed, status still pending: the expiry job has not run.
		w.Env.InCompany(t, r.b.Co.ID, func(ctx context.Context, db *ent.Client) error {
			return db.SignatureRequest.UpdateOneID(uuid.MustParse(r.req.ID)).SetExpiresAt(time.Now().Add(-time.Minute)).Exec(ctx)
		})
		wantPage(t, "GET", v.get(t, r.link), 410, "Frist")
		wantPage(t, "code", v.post(t, r.link+"/code", nil), 403, "neu") // no CSRF field: refused before anything
		wantPage(t, "sign", v.sign(t, r.link, csrf, code, "Erika Muster"), 410, "Frist")
		if s := signerRow(t, w, r.b.Co.ID, r.req.Signers[0].ID); s.Status != signaturesigner.StatusPending {
			t.Errorf("signer %s after signing an expired request", s.Status)
		}
	})

	t.Run("expired", func(t *testing.T) {
		r := newRequest(t, w)
		v := newVisitor(t, w)
		csrf := signingtest.CSRF(v.get(t, r.link).body)[r.link+"/code"]
		w.Env.InCompany(t, r.b.Co.ID, func(ctx context.Context, db *ent.Client) error {
			return db.SignatureRequest.UpdateOneID(uuid.MustParse(r.req.ID)).SetStatus(signaturerequest.StatusExpired).Exec(ctx)
		})
		wantPage(t, "code", v.post(t, r.link+"/code", map[string][]string{"csrf": {csrf}}), 410, "Frist")
		if n := len(w.Mails(r.email, signingtest.CodeSubject)); n != 0 {
			t.Errorf("%d code mails for an expired request", n)
		}
	})

	t.Run("replay after completion", func(t *testing.T) {
		r := newRequest(t, w)
		v := newVisitor(t, w)
		v.requestCode(t, r.link)
		code := w.Code(t, r.email, 1)
		csrf := v.signForm(t, r.link)
		if a := v.sign(t, r.link, csrf, code, "Erika Muster"); a.status != 303 {
			t.Fatalf("sign: %d\n%s", a.status, a.body)
		}
		first := w.GetRequest(t, r.b, r.req.ID)
		replay := v.sign(t, r.link, csrf, code, "Erika Muster")
		wantPage(t, "replay", replay, 410, "bereits vollständig unterschrieben")
		gone := v.get(t, r.link)
		wantPage(t, "GET", gone, 410, "bereits vollständig unterschrieben")
		if !strings.Contains(gone.body, r.link+"/signed.pdf") {
			t.Errorf("no download link for the signer on the completed page")
		}
		if again := w.GetRequest(t, r.b, r.req.ID); *again.SignedDocumentID != *first.SignedDocumentID ||
			*again.Signers[0].SignedAt != *first.Signers[0].SignedAt {
			t.Errorf("the replay changed the request: %+v, was %+v", again, first)
		}
		var n int
		w.Env.InCompany(t, r.b.Co.ID, func(ctx context.Context, db *ent.Client) error {
			var err error
			n, err = db.Document.Query().Count(ctx)
			return err
		})
		if n != 2 { // the source and the signed PDF
			t.Errorf("%d documents, want the source and one signed", n)
		}
	})
}

// TestSigning_Codes: a wrong code is 422 and counts; the fifth wrong one voids the code, so
// the right one no longer signs until a new one is mailed; a second code within a minute is
// 429 and mails nothing; an expired code is 422. Nothing is signed by any of them. Catches:
// unlimited guessing of a six-digit code, a code that survives its expiry, a resend button that
// floods the signer's mailbox, and an attempt counter that is rolled back with the refusal.
func TestSigning_Codes(t *testing.T) {
	t.Parallel()
	w := signingtest.Setup(t)
	r := newRequest(t, w)
	v := newVisitor(t, w)
	v.requestCode(t, r.link)
	code := w.Code(t, r.email, 1)
	csrf := v.signForm(t, r.link)
	wrong := "000000"
	if code == wrong {
		wrong = "111111"
	}

	again := v.post(t, r.link+"/code", map[string][]string{"csrf": {signingtest.CSRF(v.get(t, r.link).body)[r.link+"/code"]}})
	wantPage(t, "second code within a minute", again, 429, "Einen neuen Code können Sie ab")
	codeMails := func() int {
		var n int
		w.Env.InCompany(t, r.b.Co.ID, func(ctx context.Context, db *ent.Client) error {
			var err error
			n, err = db.Email.Query().Where(email.SubjectHasPrefix(signingtest.CodeSubject)).Count(ctx)
			return err
		})
		return n
	}
	if n := codeMails(); n != 1 {
		t.Errorf("%d code mails after two requests within a minute, want 1", n)
	}

	for i := 1; i <= 5; i++ {
		a := v.sign(t, r.link, csrf, wrong, "Erika Muster")
		want := "nicht richtig"
		if i == 5 {
			want = "zu oft falsch"
		}
		wantPage(t, "wrong code", a, 422, want)
		if i == 1 && !strings.Contains(a.body, `aria-describedby="code-error"`) {
			t.Errorf("the code's error is not linked to its input:\n%s", a.body)
		}
	}
	wantPage(t, "right code after five wrong", v.sign(t, r.link, csrf, code, "Erika Muster"), 422, "zuerst einen Code")
	if s := signerRow(t, w, r.b.Co.ID, r.req.Signers[0].ID); s.Status != signaturesigner.StatusPending ||
		s.CodeHash != nil && len(*s.CodeHash) > 0 {
		t.Fatalf("after five wrong codes: status %s, code still set", s.Status)
	}

	// A minute later (moved back below the API) a new code may be had; expired, it is refused.
	back := func() {
		w.Env.InCompany(t, r.b.Co.ID, func(ctx context.Context, db *ent.Client) error {
			return db.SignatureSigner.UpdateOneID(uuid.MustParse(r.req.Signers[0].ID)).
				SetCodeSentAt(time.Now().Add(-2 * time.Minute)).Exec(ctx)
		})
	}
	back()
	v.requestCode(t, r.link)
	second := w.Code(t, r.email, 2)
	w.Env.InCompany(t, r.b.Co.ID, func(ctx context.Context, db *ent.Client) error {
		return db.SignatureSigner.UpdateOneID(uuid.MustParse(r.req.Signers[0].ID)).
			SetCodeExpiresAt(time.Now().Add(-time.Second)).Exec(ctx)
	})
	wantPage(t, "expired code", v.sign(t, r.link, csrf, second, "Erika Muster"), 422, "abgelaufen")

	back()
	v.requestCode(t, r.link)
	third := w.Code(t, r.email, 3)
	if a := v.sign(t, r.link, csrf, third, "Erika Muster"); a.status != 303 {
		t.Fatalf("sign with a fresh code: %d\n%s", a.status, a.body)
	}
	if got := w.GetRequest(t, r.b, r.req.ID); got.Status != "completed" {
		t.Errorf("status %s after signing with a fresh code", got.Status)
	}
}
