package privacy

import (
	"context"

	"github.com/gofiber/fiber/v2"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/privacyrequest"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// downloadPath is the public route of an export's link, outside the API prefix: the data
// subject opens it without a credential; the token is the credential, for this ZIP only.
const downloadPath = "/privacy-downloads/"

// MountPublic registers the download route.
func (m *Module) MountPublic(app *fiber.App) {
	app.Get(downloadPath+":token", m.download)
}

// download serves the ZIP of the request whose token is in the path, while the link lasts. A
// token it did not make, another request's, an export not written yet, failed or past
// expiresAt are all the same 404: the answer tells nothing about which. The link may be used
// again until it expires (docs/decisions/privacy.md "Download link").
func (m *Module) download(c *fiber.Ctx) error {
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set("Referrer-Policy", "no-referrer") // the token is in the URL
	token := c.Params("token")
	company, ok := tokenCompany(token)
	if !ok {
		return notFound()
	}
	var req *ent.PrivacyRequest
	ctx := c.UserContext()
	err := tenancy.CompanyTx(ctx, m.d.DB, company, func(ctx context.Context) error {
		var err error
		req, err = tenancy.Client(ctx).PrivacyRequest.Query().Where(
			privacyrequest.DownloadTokenHash(hashToken(token)),
			privacyrequest.TypeEQ(privacyrequest.TypeDataExport),
			privacyrequest.StatusEQ(privacyrequest.StatusCompleted),
			privacyrequest.ExpiresAtGT(m.now()),
			privacyrequest.BlobKeyNotNil()).Only(ctx)
		return err
	})
	if ent.IsNotFound(err) {
		return notFound()
	}
	if err != nil {
		return err
	}
	r, err := m.d.Bucket.NewReader(ctx, *req.BlobKey, nil)
	if err != nil {
		return errs.Unavailable("unavailable", "the export cannot be read right now; retry in a moment")
	}
	name := "datenauskunft-" + req.CompletedAt.Format("2006-01-02") + ".zip"
	if err := httpx.SendStreamAs(c, name, "application/zip", r, r.Size()); err != nil {
		return err
	}
	// A ZIP is not among httpx.SafeTypes (uploads of any type are served as octet-stream); this
	// one we wrote ourselves, and browsers save rather than open it (attachment, nosniff).
	c.Set(fiber.HeaderContentType, "application/zip")
	return nil
}

func notFound() error { return errs.NotFound("download link not found or expired") }
