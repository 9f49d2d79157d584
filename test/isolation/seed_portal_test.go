package isolation

import (
	"context"
	"crypto/sha256"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/portaltoken"
	"github.com/brokerdesk/brokerdesk/test/apitest"
	"github.com/brokerdesk/brokerdesk/test/portaltest"
)

// seedPortalTables gives company c rows in every table of the customer portal (issue 23), as
// the app role pinned to c: contact's active access with a signed-in session (portaltest, as
// accepting the invitation would leave them), a pending change request of it, and an unused
// password-reset link. Written directly rather than through POST …/portal-access: the companies
// of the isolation suite do not license customer_portal, and the invitation's mail is no concern
// here.
func seedPortalTables(t *testing.T, env *apitest.Env, c *apitest.Company, contactID string) {
	t.Helper()
	customer := portaltest.SignIn(t, env, c.ID, uuid.MustParse(contactID))
	portaltest.ChangeRequest(t, env, customer, "neu-"+c.ID.String()[:8]+"@kunde.test")
	env.InCompany(t, c.ID, func(ctx context.Context, db *ent.Client) error {
		hash := sha256.Sum256([]byte("seed-" + c.ID.String()))
		now := time.Now()
		_, err := db.PortalToken.Create().SetAccessID(customer.Access).SetContactID(customer.Contact).
			SetPurpose(portaltoken.PurposePasswordReset).SetTokenHash(hash[:]).SetExpiresAt(now.Add(time.Hour)).
			SetCreatedAt(now).Save(ctx)
		return err
	})
}
