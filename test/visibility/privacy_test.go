package visibility

import (
	"strings"
	"testing"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// TestVisibility_PrivacyRequests: a privacy request is as visible as its contact was when it
// was made (owner_id, app_visible_owner): every credential of the matrix lists the request about
// agent A's customer exactly when it sees A's rows, the one about an unowned contact when it
// sees unowned rows, and another company's or the sandbox's key neither. Making a request is
// for managers and admins (policy.csv): an agent's key is 403, whoever's the contact; a contact
// the credential cannot see is 404. Catches a list that ignores visibility, one that reads the
// contact's owner now, and a POST that looks the contact up company-wide.
func TestVisibility_PrivacyRequests(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	co := w.co.Secret
	a := idOf(t, w.do(t, co, "POST", "/contacts", map[string]any{"type": "private", "firstName": "Dora", "lastName": "Datenschutz",
		"ownerId": w.agentA.ID.String()}, 201))
	none := idOf(t, w.do(t, co, "POST", "/contacts", map[string]any{"type": "private", "firstName": "Udo", "lastName": "Ohnebetreuer"}, 201))
	ra := idOf(t, w.do(t, co, "POST", "/contacts/"+a+"/privacy/data-export", nil, 202))
	rn := idOf(t, w.do(t, co, "POST", "/contacts/"+none+"/privacy/data-export", nil, 202))
	for name, key := range w.keys {
		t.Run("list/"+name, func(t *testing.T) {
			r := w.env.Do(t, apitest.Request{Path: "/privacy-requests?limit=100", Key: key})
			if strings.HasPrefix(name, "agent") && strings.HasSuffix(name, "token") {
				// An agent's OAuth grant holds only scopes its role allows: privacy:write is not one.
				if r.Status != 403 {
					t.Errorf("%d, want 403: %s", r.Status, r.Body)
				}
				return
			}
			if r.Status != 200 {
				t.Fatalf("%d %s", r.Status, r.Body)
			}
			body := string(r.Body)
			if got, want := strings.Contains(body, ra), w.seesA[name]; got != want {
				t.Errorf("lists the request about A's customer: %v, want %v", got, want)
			}
			if got, want := strings.Contains(body, rn), w.seesUnowned[name]; got != want {
				t.Errorf("lists the request about the unowned contact: %v, want %v", got, want)
			}
		})
	}
	for name, want := range map[string]int{"agent A key": 403, "agent B key": 403, "agent A token": 403,
		"manager key": 202, "admin user key": 202, "other company's key": 404, "sandbox key": 404} {
		t.Run("request/"+name, func(t *testing.T) {
			r := w.env.Do(t, apitest.Request{Method: "POST", Path: "/contacts/" + a + "/privacy/data-export", Key: w.keys[name]})
			if r.Status != want {
				t.Errorf("%d, want %d: %s", r.Status, want, r.Body)
			}
		})
	}
}
