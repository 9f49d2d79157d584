package browser

import (
	"bytes"
	"context"
	"github.com/brokerdesk/brokerdesk/test/pdftest"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/test/apitest"
	"github.com/brokerdesk/brokerdesk/test/signing/signingtest"
)

// TestBrowser_Signing: the whole signing round trip in Chromium. The signer opens the mailed
// link, clicks "Code per E-Mail anfordern", types the mailed code, draws a signature on the
// canvas with the mouse, ticks the box and submits; the thank-you page shows, the drawing
// (not a typed name) is the stored signature, and the filed PDF verifies with pdfsig. Catches:
// a page the Content-Security-Policy breaks (the pad's script or style blocked by its nonce),
// a drawing pad that never fills the hidden field, a cookie Chromium does not send with the
// form (SameSite, Path), a redirect the browser does not follow, and a sealed PDF pdfsig
// rejects.
func TestBrowser_Signing(t *testing.T) {
	t.Parallel()
	w := signingtest.Setup(t)
	b := w.NewBroker(t)
	email := signingtest.Address("erika")
	contact := w.NewContact(t, b, "Erika", "Muster", email)
	doc := w.UploadPDF(t, b, contact, "Maklervollmacht.pdf", "# Maklervollmacht\nErika Muster bevollmächtigt die Maklerin.")
	r := w.CreateRequest(t, b, map[string]any{"contactId": contact, "title": "Maklervollmacht Erika Muster",
		"documents": []map[string]any{{"documentId": doc}}, "signers": []map[string]any{{"role": "contact"}},
		"fields": []map[string]any{{"signer": 0, "page": 1, "x": 0.1, "y": 0.7, "width": 0.35, "height": 0.08}}})
	link := w.Base + w.LinkPath(t, email)

	tab, _ := newTab(t, newBrowser(t, context.Background()))
	do(t, tab,
		chromedp.Navigate(link),
		chromedp.WaitVisible(chromedp.CSS("#request-code")),
		chromedp.Click(chromedp.CSS("#request-code")),
		// The pad is hidden until its script runs: visible means the script ran under the CSP.
		chromedp.WaitVisible(chromedp.CSS("#pad-canvas")),
	)
	// The style sheet runs by its nonce too: the submit button has the page's colour.
	if bg := run(t, tab, chromedp.Evaluate[string](`getComputedStyle(document.getElementById('submit')).backgroundColor`)); bg != "rgb(26, 95, 180)" {
		t.Errorf("submit button background %q: the page's style did not apply", bg)
	}
	code := w.Code(t, email, 1)
	do(t, tab,
		chromedp.SendKeys(chromedp.CSS("#code"), code),
		chromedp.ScrollIntoView(chromedp.CSS("#pad-canvas")),
	)
	box := run(t, tab, chromedp.Evaluate[[]float64](`(() => { const r = document.getElementById('pad-canvas').getBoundingClientRect();
		return [r.left, r.top, r.width, r.height]; })()`))
	x0, y0, width, height := box[0], box[1], box[2], box[3]
	// A stroke across the pad: press, move in steps (a wave), release.
	stroke := []chromedp.Action[chromedp.Void]{chromedp.MouseEvent(chromedp.MousePressed, x0+width*0.1, y0+height*0.6,
		chromedp.ButtonLeft, chromedp.ClickCount(1))}
	for i := 1; i <= 20; i++ {
		f := float64(i) / 20
		y := y0 + height*(0.6-0.3*f*(1-f)*4*float64(i%2))
		stroke = append(stroke, chromedp.MouseEvent(chromedp.MouseMoved, x0+width*(0.1+0.8*f), y, chromedp.ButtonLeft,
			func(p *input.DispatchMouseEventParams) { p.Buttons = 1 }))
	}
	stroke = append(stroke, chromedp.MouseEvent(chromedp.MouseReleased, x0+width*0.9, y0+height*0.6, chromedp.ButtonLeft,
		chromedp.ClickCount(1)))
	do(t, tab, stroke...)
	do(t, tab,
		chromedp.Click(chromedp.CSS("#consent")),
		chromedp.Click(chromedp.CSS("#submit")),
		// the thank-you page of a completed request offers the signed PDF
		chromedp.WaitVisible(chromedp.CSS(`a[href$="/signed.pdf"]`)),
	)
	if loc := run(t, tab, chromedp.Location()); !strings.HasSuffix(loc, "?step=done") {
		t.Errorf("after signing the tab is at %s", loc)
	}
	if body := run(t, tab, chromedp.Text(chromedp.CSS("main"))); !strings.Contains(body, "Vielen Dank") ||
		!strings.Contains(body, "vollständig unterschrieben") {
		t.Errorf("thank-you page says:\n%s", body)
	}

	var s *ent.SignatureSigner
	w.Env.InCompany(t, b.Co.ID, func(ctx context.Context, db *ent.Client) error {
		var err error
		s, err = db.SignatureSigner.Get(ctx, uuid.MustParse(r.Signers[0].ID))
		return err
	})
	if s.Signature == nil || !bytes.HasPrefix(*s.Signature, []byte("\x89PNG")) || s.TypedName != "" {
		t.Errorf("stored signature: typed name %q, drawn PNG %v", s.TypedName, s.Signature != nil && len(*s.Signature) > 0)
	}
	got := w.GetRequest(t, b, r.ID)
	if got.Status != "completed" || got.SignedDocumentID == nil {
		t.Fatalf("request after signing: %+v", got)
	}
	resp := w.Env.Do(t, apitest.Request{Path: "/documents/" + *got.SignedDocumentID + "/content", Key: b.Co.Secret})
	if resp.Status != 200 {
		t.Fatalf("signed document: %d", resp.Status)
	}
	out, err := pdftest.Run(t, "pdfsig", resp.Body)
	if err != nil || !strings.Contains(out, "Signature is Valid.") || !strings.Contains(out, "Total document signed") {
		t.Errorf("pdfsig (%v):\n%s", err, out)
	}
}
