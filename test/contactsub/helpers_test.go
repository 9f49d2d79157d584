// Package contactsub tests the sub-resources of a contact (issue 8): phones, relationships,
// household finances, activities and notes, their error cases, isolation between companies and
// the visibility of a user-bound credential.
package contactsub

import (
	"context"
	"database/sql"
	"os"
	"testing"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

func TestMain(m *testing.M) { os.Exit(apitest.Main(m)) }

// insertContact stores a contact of company straight in the database as the app role pinned to
// it (POST /contacts belongs to the contacts core), owned by owner (nil: nobody).
func insertContact(t testing.TB, env *apitest.Env, company uuid.UUID, typ, name string, owner *uuid.UUID) string {
	t.Helper()
	id := uuid.Must(uuid.NewV7())
	first, last, firm := "Ada", name, ""
	if typ == "business" {
		first, last, firm = "", "", name
	}
	err := env.Pinned(context.Background(), company, func(tx *sql.Tx) error {
		_, err := tx.Exec(`INSERT INTO contacts (tags, labels, custom_fields, groups, sensitive, sort_name, search_text, id, company_id, type, first_name, last_name, company_name, owner_id, version, created_at, updated_at)
			VALUES ('[]', '[]', '{}', '{}', '{}', '', '', $1, $2, $3, $4, $5, $6, $7, 1, now(), now())`, id, company, typ, first, last, firm, owner)
		return err
	})
	if err != nil {
		t.Fatalf("insert contact: %v", err)
	}
	return id.String()
}

// count runs a pinned count query (RLS applies, visibility 'all').
func count(t testing.TB, env *apitest.Env, company uuid.UUID, q string, args ...any) int {
	t.Helper()
	var n int
	err := env.Pinned(context.Background(), company, func(tx *sql.Tx) error {
		return tx.QueryRow(q, args...).Scan(&n)
	})
	if err != nil {
		t.Fatalf("count: %v", err)
	}
	return n
}

func do(t testing.TB, env *apitest.Env, method, path, key string, body any) *apitest.Response {
	t.Helper()
	return env.Do(t, apitest.Request{Method: method, Path: path, Key: key, Body: body})
}

func must(t testing.TB, r *apitest.Response, status int) *apitest.Response {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d: %s", r.Status, status, r.Body)
	}
	return r
}

type phone struct {
	ID        string `json:"id"`
	Number    string `json:"number"`
	Type      string `json:"type"`
	IsPrimary bool   `json:"isPrimary"`
	CreatedAt string `json:"createdAt"`
	UpdatedAt string `json:"updatedAt"`
}

type relationship struct {
	ID               string  `json:"id"`
	ContactID        string  `json:"contactId"`
	RelatedContactID string  `json:"relatedContactId"`
	Role             string  `json:"role"`
	Position         *string `json:"position"`
	RelatedContact   struct {
		LastName    string  `json:"lastName"`
		CompanyName *string `json:"companyName"`
	} `json:"relatedContact"`
}

type activity struct {
	ID         string  `json:"id"`
	Type       string  `json:"type"`
	Event      *string `json:"event"`
	Content    string  `json:"content"`
	OccurredAt string  `json:"occurredAt"`
}
