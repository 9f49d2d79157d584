package operator

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// TestCreateKey_AllowedDomains catches issue 20 item 9: a publishable key's allowed domains
// took public suffixes (github.io, co.uk), which let every site below them post with the key
// and be a _redirect target. They are refused (public suffix list, ICANN and private
// sections) with a 422 naming the field, before anything is stored; a site's own domain below
// such a suffix, and localhost, stay allowed.
func TestCreateKey_AllowedDomains(t *testing.T) {
	uid := uuid.New()
	in := func(domains ...string) NewKeyInput {
		return NewKeyInput{CompanyID: uuid.New(), UserID: &uid, Kind: tenancy.KindPublishable, Env: tenancy.EnvLive,
			AllowedDomains: domains}
	}
	for _, d := range []string{"github.io", "co.uk", "blogspot.com", "herokuapp.com", " GitHub.IO ", "foo.ck"} {
		// refused before the transaction: the service has no database here
		_, err := New(nil).CreateKey(context.Background(), in("makler.example", d))
		var inv *errs.Invalid
		if !errors.As(err, &inv) || len(inv.Errors) != 1 || inv.Errors[0].Field != "allowedDomains" || inv.Errors[0].Code != "public_suffix" {
			t.Errorf("%q: %v, want one public_suffix error on allowedDomains", d, err)
			continue
		}
		if p := httpx.ToProblem(err); p.Status != http.StatusUnprocessableEntity {
			t.Errorf("%q: status %d, want 422", d, p.Status)
		}
	}
	// allowed ones (example.github.io, www.example.co.uk, localhost) are created in
	// cmd/brokerdesk TestCLI_Operator, with a database
}
