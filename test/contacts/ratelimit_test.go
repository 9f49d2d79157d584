package contacts

import (
	"testing"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// TestContacts_RateLimitHeaders: RateLimit-Limit and RateLimit-Remaining on every authenticated
// contacts answer (spec: Limits), an error answer too.
func TestContacts_RateLimitHeaders(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.NewCompany(t)
	for _, r := range []apitest.Request{
		{Path: "/contacts", Key: a.Secret},
		{Path: "/contacts/" + uuid.NewString(), Key: a.Secret},
		{Method: "POST", Path: "/contacts", Key: a.Secret, Body: `{"type":"private"}`},
		{Method: "POST", Path: "/contacts/match", Key: a.Secret, Body: `{"lastName":"X"}`},
	} {
		got := env.Do(t, r)
		if got.Header.Get("RateLimit-Limit") != "600" || got.Header.Get("RateLimit-Remaining") == "" {
			t.Errorf("%s %s: %d, RateLimit-Limit %q, RateLimit-Remaining %q", r.Method, r.Path, got.Status,
				got.Header.Get("RateLimit-Limit"), got.Header.Get("RateLimit-Remaining"))
		}
	}
}
