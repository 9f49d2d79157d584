package signatures

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"gocloud.dev/blob"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/ent"
)

// blobReadTimeout bounds the read of a PDF from blob storage once the answer streams (the
// request's context ends when the handler returns, before the body is sent).
const blobReadTimeout = 5 * time.Minute

// document handles GET /sign/{token}/document.pdf: the merged PDF the signer is asked to sign,
// shown inline, while the request is pending (a signer who signed may look at it again).
func (m *Module) document(c *fiber.Ctx) error {
	v, err := m.visitIn(c, false, func(context.Context, *visit) error { return nil })
	if err != nil {
		return m.failed(c, err, "")
	}
	if st := m.state(v.req); st != statePending {
		return m.gone(c, v, st)
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(c.UserContext()), blobReadTimeout)
	r, err := m.d.Bucket.NewReader(rctx, v.req.SourceBlobKey, nil)
	if err != nil {
		cancel()
		return m.failed(c, fmt.Errorf("read source of signature request %s: %w", v.req.ID, err), "/sign/"+v.token)
	}
	pageHeaders(c)
	c.Set(fiber.HeaderContentType, "application/pdf")
	c.Set(fiber.HeaderContentDisposition, inlineDisposition(pdfName(v.req.Title, "")))
	// fasthttp closes the stream (and with it the timeout) when the body is sent.
	c.Context().SetBodyStream(&cancelReader{Reader: r, cancel: cancel}, int(r.Size()))
	return nil
}

// signedPDF handles GET /sign/{token}/signed.pdf: the sealed PDF for a signer who signed, for
// 30 days after completion (then, or when the broker deleted the document, 410).
func (m *Module) signedPDF(c *fiber.Ctx) error {
	var d *ent.Document
	v, err := m.visitIn(c, false, func(ctx context.Context, v *visit) error {
		if !m.mayDownload(v) {
			return nil
		}
		var err error
		if d, err = m.d.Docs.Get(ctx, *v.req.SignedDocumentID); err != nil && !errors.Is(err, errs.ErrNotFound) {
			return err
		}
		return nil
	})
	if err != nil {
		return m.failed(c, err, "")
	}
	if d == nil {
		return m.message(c, fiber.StatusGone, pageData{Heading: "Download nicht verfügbar", Company: v.companyName,
			Lines: []string{"Das unterschriebene Dokument steht über diesen Link nicht (mehr) zur Verfügung.",
				"Bitte wenden Sie sich an " + v.companyName + "."}})
	}
	content, err := m.d.Docs.Open(c.UserContext(), d)
	if err != nil {
		return m.failed(c, err, "")
	}
	pageHeaders(c)
	return httpx.SendStreamAs(c, d.Filename, d.ContentType, content, d.Size)
}

// cancelReader is a blob reader that ends its context when closed.
type cancelReader struct {
	*blob.Reader
	cancel context.CancelFunc
}

func (r *cancelReader) Close() error {
	defer r.cancel()
	return r.Reader.Close()
}

var _ io.ReadCloser = (*cancelReader)(nil)

// inlineDisposition is httpx.AttachmentDisposition for a file the browser shows.
func inlineDisposition(name string) string {
	return "inline" + strings.TrimPrefix(httpx.AttachmentDisposition(name), "attachment")
}

// pdfName is the file name of a request's PDF: its title (path separators replaced, cleaned
// as an uploaded name is) with suffix and ".pdf", at most httpx.MaxFilenameLen characters.
func pdfName(title, suffix string) string {
	tail := suffix + ".pdf"
	name := strings.NewReplacer("/", "-", `\`, "-").Replace(title)
	name = httpx.CleanFilename(name, "Dokument")
	if r := []rune(name); len(r)+len([]rune(tail)) > httpx.MaxFilenameLen {
		name = strings.TrimSpace(string(r[:httpx.MaxFilenameLen-len([]rune(tail))]))
	}
	return name + tail
}
