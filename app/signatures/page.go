package signatures

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/rs/zerolog"

	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/signaturerequest"
	"github.com/brokerdesk/brokerdesk/ent/signaturesigner"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// The hosted signing page of the built-in provider. Every route is public: the link's token
// (token.go) names the company and the signer and is the only credential. Each answer is an
// HTML page, errors included (a signer's browser shows it; the API's problem+json would be
// noise to them), with one exception: a transient database failure is returned so that the
// server's retry middleware runs the request again (when its budget is spent the answer is
// the API's 503).
//
//	GET  /sign/{token}               step 1 (review, request a code); ?step=sign the form;
//	                                 ?step=done the thank-you page
//	POST /sign/{token}/code          mail a one-time code, then 303 to ?step=sign
//	POST /sign/{token}               sign (code, drawn or typed signature, consent), 303 to ?step=done
//	GET  /sign/{token}/document.pdf  the merged PDF to review, while the request is pending
//	GET  /sign/{token}/signed.pdf    the sealed PDF, for a signer who signed, 30 days after completion

// MountPublic registers the signing page's routes (no credential; the link's token is it).
func (m *Module) MountPublic(app *fiber.App) {
	app.Get("/sign/:token", m.page)
	app.Post("/sign/:token", m.sign)
	app.Post("/sign/:token/code", m.requestCode)
	app.Get("/sign/:token/document.pdf", m.document)
	app.Get("/sign/:token/signed.pdf", m.signedPDF)
}

// signedDownloadFor is how long after completion a signer may download the signed PDF by the
// link (the broker has it for good, filed with the contact).
const signedDownloadFor = 30 * 24 * time.Hour

// visit is what a signing link opened.
type visit struct {
	token       string
	company     uuid.UUID
	signer      *ent.SignatureSigner
	req         *ent.SignatureRequest
	companyName string
}

// errUnknownLink: no signer has the link's id, or its token hash is not the link's.
var errUnknownLink = errors.New("unknown signing link")

// open reads the signer and the request of a link in ctx's company transaction and checks the
// token against the signer's token_hash. With lock it takes the request row FOR UPDATE and then
// the signer's: every writer of the page takes them in that order, so two signers of one
// request are served one after the other (the second sees the first's signature), and a
// signature is never stored beside a concurrent cancel.
func (m *Module) open(ctx context.Context, tok string, company, signerID uuid.UUID, lock bool) (*visit, error) {
	db := tenancy.Client(ctx)
	s, err := db.SignatureSigner.Get(ctx, signerID)
	if ent.IsNotFound(err) {
		return nil, errUnknownLink
	}
	if err != nil {
		return nil, fmt.Errorf("read signer %s: %w", signerID, err)
	}
	if !sameToken(s.TokenHash, tok) {
		return nil, errUnknownLink
	}
	q := db.SignatureRequest.Query().Where(signaturerequest.ID(s.RequestID))
	if lock {
		q.ForUpdate()
	}
	r, err := q.Only(ctx)
	if err != nil {
		return nil, fmt.Errorf("read signature request %s: %w", s.RequestID, err)
	}
	if lock {
		if s, err = db.SignatureSigner.Query().Where(signaturesigner.ID(signerID)).ForUpdate().Only(ctx); err != nil {
			return nil, fmt.Errorf("lock signer %s: %w", signerID, err)
		}
	}
	co, err := db.Company.Get(ctx, company)
	if err != nil {
		return nil, fmt.Errorf("read company %s: %w", company, err)
	}
	return &visit{token: tok, company: company, signer: s, req: r, companyName: co.Name}, nil
}

// visitIn parses the link of c and runs fn with its visit in a company transaction; a forged
// token or an unknown signer is errUnknownLink.
func (m *Module) visitIn(c *fiber.Ctx, lock bool, fn func(ctx context.Context, v *visit) error) (*visit, error) {
	tok := c.Params("token")
	company, signerID, ok := m.parseLinkToken(tok)
	if !ok {
		return nil, errUnknownLink
	}
	var v *visit
	err := m.companyTx(c.UserContext(), company, func(ctx context.Context) error {
		var err error
		if v, err = m.open(ctx, tok, company, signerID, lock); err != nil {
			return err
		}
		return fn(ctx, v)
	})
	return v, err
}

// linkState is where a request stands for its links.
type linkState int

const (
	statePending linkState = iota
	stateCompleted
	stateCancelled
	stateExpired
)

// state of r now: a pending request past expires_at is expired for the links even before the
// expiry job marks it.
func (m *Module) state(r *ent.SignatureRequest) linkState {
	switch r.Status {
	case signaturerequest.StatusCompleted:
		return stateCompleted
	case signaturerequest.StatusCancelled:
		return stateCancelled
	case signaturerequest.StatusExpired:
		return stateExpired
	}
	if !m.d.Now().Before(r.ExpiresAt) {
		return stateExpired
	}
	return statePending
}

func signed(s *ent.SignatureSigner) bool { return s.Status == signaturesigner.StatusSigned }

// closed answers for a visit that cannot go on to sign: the signer signed (the thank-you page
// with status doneStatus) or the request is no longer pending (410). false: go on.
func (m *Module) closed(c *fiber.Ctx, v *visit, doneStatus int, thanks bool) (bool, error) {
	st := m.state(v.req)
	if signed(v.signer) && (st == statePending || thanks) {
		return true, m.done(c, v, doneStatus)
	}
	if st != statePending {
		return true, m.gone(c, v, st)
	}
	return false, nil
}

// done is the page of a signer who signed.
func (m *Module) done(c *fiber.Ctx, v *visit, status int) error {
	d := pageData{Heading: "Vielen Dank, " + v.signer.Name, Company: v.companyName}
	when := v.signer.SignedAt
	if when != nil {
		d.Lines = append(d.Lines, "Sie haben „"+v.req.Title+"“ am "+berlinTime(*when)+" elektronisch unterschrieben.")
	}
	if m.state(v.req) == stateCompleted {
		d.Lines = append(d.Lines, "Das Dokument ist jetzt vollständig unterschrieben. "+v.companyName+
			" erhält das unterschriebene Dokument.")
		d.SignedURL = m.signedURL(v)
	} else {
		d.Lines = append(d.Lines, "Sobald alle unterschrieben haben, erhält "+v.companyName+" das unterschriebene Dokument.")
	}
	return m.message(c, status, d)
}

// gone is the 410 page of a request that is completed, cancelled or expired.
func (m *Module) gone(c *fiber.Ctx, v *visit, st linkState) error {
	d := pageData{Heading: "Dieser Link ist nicht mehr gültig", Company: v.companyName}
	switch st {
	case stateCompleted:
		d.Lines = []string{"„" + v.req.Title + "“ ist bereits vollständig unterschrieben."}
		d.SignedURL = m.signedURL(v)
	case stateCancelled:
		d.Lines = []string{"Die Anfrage zur Unterschrift von „" + v.req.Title + "“ wurde zurückgezogen.",
			"Bei Fragen wenden Sie sich bitte an " + v.companyName + "."}
	default:
		d.Lines = []string{"Die Frist zur Unterschrift von „" + v.req.Title + "“ ist abgelaufen.",
			"Bitte wenden Sie sich an " + v.companyName + ", wenn Sie noch unterschreiben möchten."}
	}
	return m.message(c, fiber.StatusGone, d)
}

// signedURL is the download of the signed PDF for a signer who signed, within 30 days of
// completion; "" otherwise.
func (m *Module) signedURL(v *visit) string {
	if !m.mayDownload(v) {
		return ""
	}
	return "/sign/" + v.token + "/signed.pdf"
}

func (m *Module) mayDownload(v *visit) bool {
	r := v.req
	return r.Status == signaturerequest.StatusCompleted && signed(v.signer) && r.SignedDocumentID != nil &&
		r.CompletedAt != nil && m.d.Now().Before(r.CompletedAt.Add(signedDownloadFor))
}

// berlinTime is t as the page and the PDF write it (the customers are in Germany).
func berlinTime(t time.Time) string { return t.In(httpx.Berlin).Format("02.01.2006, 15:04 Uhr") }

// failed answers an error of the page: a link not ours or not a signer's is the 404 page; a
// transient database failure goes back to the retry middleware; anything else is logged and
// answered with a page saying to try again (the transaction rolled back: nothing was signed).
func (m *Module) failed(c *fiber.Ctx, err error, back string) error {
	if errors.Is(err, errUnknownLink) {
		return m.unknownLink(c)
	}
	if tenancy.Classify(err) == tenancy.Transient {
		return err
	}
	zerolog.Ctx(c.UserContext()).Error().Err(err).Str("path", c.Route().Path).Msg("signing page")
	return m.message(c, fiber.StatusInternalServerError, pageData{Heading: "Das hat leider nicht geklappt",
		Lines: []string{"Es ist ein technischer Fehler aufgetreten; es wurde nichts unterschrieben.",
			"Bitte versuchen Sie es in einigen Minuten erneut."}, Back: back})
}

// formData is the data of the review and sign pages of v, with the forms' CSRF tokens for the
// browser's nonce.
func (m *Module) formData(c *fiber.Ctx, v *visit) (pageData, error) {
	nonce, err := m.browserNonce(c)
	if err != nil {
		return pageData{}, err
	}
	d := pageData{Heading: v.req.Title, Company: v.companyName, Signer: v.signer.Name, Email: v.signer.Email,
		Message: v.req.Message, Action: "/sign/" + v.token,
		CSRF:     m.csrfToken(purposeSign, v.signer.ID, nonce),
		CodeCSRF: m.csrfToken(purposeCode, v.signer.ID, nonce),
		CodeSent: hasCode(v.signer) && v.signer.CodeExpiresAt != nil && m.d.Now().Before(*v.signer.CodeExpiresAt)}
	if d.CodeSent && v.signer.CodeSentAt != nil {
		d.Notice = "Wir haben Ihnen am " + berlinTime(*v.signer.CodeSentAt) + " einen Code an " + v.signer.Email +
			" gesendet. Er gilt 10 Minuten."
	}
	return d, nil
}

// page handles GET /sign/{token}: step 1 (review the PDF, request a code), the sign form
// (?step=sign), the thank-you page (?step=done), or the page of a link that is done. The
// signer's first view is recorded (viewed_at).
func (m *Module) page(c *fiber.Ctx) error {
	v, err := m.visitIn(c, false, func(ctx context.Context, v *visit) error {
		if m.state(v.req) != statePending || v.signer.ViewedAt != nil {
			return nil
		}
		return m.markViewed(ctx, v)
	})
	if err != nil {
		return m.failed(c, err, "")
	}
	step := c.Query("step")
	if ok, err := m.closed(c, v, fiber.StatusOK, step == "done"); ok {
		return err
	}
	d, err := m.formData(c, v)
	if err != nil {
		return m.failed(c, err, "")
	}
	if step == "sign" {
		return m.render(c, fiber.StatusOK, "sign", d)
	}
	return m.render(c, fiber.StatusOK, "review", d)
}

// markViewed records the signer's first view. The request row is touched first (its version
// is the ETag of a View that now shows viewedAt; and request before signer is the page's lock
// order).
func (m *Module) markViewed(ctx context.Context, v *visit) error {
	now := m.d.Now()
	db := tenancy.Client(ctx)
	if err := db.SignatureRequest.UpdateOneID(v.req.ID).SetUpdatedAt(now).Exec(ctx); err != nil {
		return fmt.Errorf("touch signature request %s: %w", v.req.ID, err)
	}
	if err := db.SignatureSigner.Update().
		Where(signaturesigner.ID(v.signer.ID), signaturesigner.ViewedAtIsNil()).
		SetViewedAt(now).Exec(ctx); err != nil {
		return fmt.Errorf("mark signer %s viewed: %w", v.signer.ID, err)
	}
	return nil
}

// forbidden is the 403 page of a form post without a valid CSRF field and cookie.
func (m *Module) forbidden(c *fiber.Ctx) error {
	return m.message(c, fiber.StatusForbidden, pageData{Heading: "Bitte laden Sie die Seite neu",
		Lines: []string{"Das Formular ist abgelaufen oder wurde nicht in diesem Browser geöffnet. Es wurde nichts gesendet " +
			"und nichts unterschrieben.", "Öffnen Sie den Link aus der E-Mail erneut."},
		Back: "/sign/" + c.Params("token")})
}

// requestCode handles POST /sign/{token}/code: mails a one-time code and 303s to the sign
// form; a second request within a minute mails nothing and says when the next one may be had
// (429).
func (m *Module) requestCode(c *fiber.Ctx) error {
	_, signerID, ok := m.parseLinkToken(c.Params("token"))
	if !ok {
		return m.unknownLink(c)
	}
	if !m.csrfOK(c, purposeCode, signerID) {
		return m.forbidden(c)
	}
	var soon errCodeTooSoon
	open := true
	v, err := m.visitIn(c, true, func(ctx context.Context, v *visit) error {
		if signed(v.signer) || m.state(v.req) != statePending {
			open = false
			return nil
		}
		return m.sendCode(ctx, v)
	})
	if errors.As(err, &soon) {
		d, err := m.formData(c, v)
		if err != nil {
			return m.failed(c, err, "")
		}
		d.Notice = "Wir haben Ihnen gerade erst einen Code gesendet. Einen neuen Code können Sie ab " +
			soon.next.In(httpx.Berlin).Format("15:04:05") + " Uhr anfordern. Bitte sehen Sie auch im Spam-Ordner nach."
		c.Set(fiber.HeaderRetryAfter, fmt.Sprint(int(soon.next.Sub(m.d.Now()).Seconds())+1))
		return m.render(c, fiber.StatusTooManyRequests, "sign", d)
	}
	if err != nil {
		return m.failed(c, err, "/sign/"+c.Params("token"))
	}
	if !open {
		_, err := m.closed(c, v, fiber.StatusConflict, false)
		return err
	}
	return c.Redirect("/sign/"+v.token+"?step=sign", fiber.StatusSeeOther)
}
