package contacts

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/ent"
)

// TestNewView_TimesInUTC: a contact read in text format carries the session's offset (a list
// with q, tenancy.CustomPlans); the resource shows UTC all the same.
func TestNewView_TimesInUTC(t *testing.T) {
	berlin := time.FixedZone("CET", 3600)
	at := time.Date(2026, 11, 26, 23, 30, 0, 0, berlin)
	b, err := json.Marshal(NewView(Contact{Contact: &ent.Contact{ID: uuid.New(), Type: "private", CreatedAt: at, UpdatedAt: at}}))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"createdAt":"2026-11-26T22:30:00Z"`, `"updatedAt":"2026-11-26T22:30:00Z"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("%s: want %s", b, want)
		}
	}
}
