// Package isolation proves that one company never sees, counts, changes or deletes another's
// rows, through every endpoint and underneath them in PostgreSQL.
package isolation

import (
	"bytes"
	"context"
	"database/sql"
	"mime/multipart"
	"os"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

func TestMain(m *testing.M) { os.Exit(apitest.Main(m)) }

func TestIsolation(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a, b := env.NewCompany(t), env.NewCompany(t)
	bAgent := env.NewUser(t, b, "agent")
	aAgent := env.NewUser(t, a, "agent")

	t.Run("users list shows only the company's users", func(t *testing.T) {
		for _, tc := range []struct {
			key  string
			want []uuid.UUID
		}{
			{a.Secret, []uuid.UUID{a.Admin.ID, aAgent.ID}},
			{b.Secret, []uuid.UUID{b.Admin.ID, bAgent.ID}},
			{a.TestSecret, []uuid.UUID{a.Admin.SandboxID, aAgent.SandboxID}},
		} {
			r := env.Do(t, apitest.Request{Path: "/users?limit=200", Key: tc.key})
			var page struct {
				Data []struct {
					ID uuid.UUID `json:"id"`
				} `json:"data"`
			}
			r.Decode(t, &page)
			if len(page.Data) != len(tc.want) {
				t.Fatalf("got %d users, want %d: %s", len(page.Data), len(tc.want), r.Body)
			}
			for i, u := range page.Data {
				if u.ID != tc.want[i] {
					t.Errorf("user %d = %s, want %s", i, u.ID, tc.want[i])
				}
			}
		}
	})

	t.Run("another company's ids answer 404", func(t *testing.T) {
		env.Run(t, []apitest.Case{
			{Name: "B's user via A", Key: a.Secret, Path: "/users/" + bAgent.ID.String(), Status: 404, Problem: "not_found"},
			{Name: "A's live user via A's sandbox key", Key: a.TestSecret, Path: "/users/" + aAgent.ID.String(), Status: 404, Problem: "not_found"},
			{Name: "A's sandbox twin via A's live key", Key: a.Secret, Path: "/users/" + aAgent.SandboxID.String(), Status: 404, Problem: "not_found"},
			{Name: "B's user via B", Key: b.Secret, Path: "/users/" + bAgent.ID.String(), Status: 200},
			{Name: "email filter does not reach B", Key: a.Secret, Path: "/users?email=" + bAgent.Email, Status: 200,
				Check: func(t *testing.T, r *apitest.Response) {
					var page struct{ Data []any }
					r.Decode(t, &page)
					if len(page.Data) != 0 {
						t.Errorf("A found B's user by e-mail: %s", r.Body)
					}
				}},
		})
	})

	t.Run("another company's webhook endpoint answers 404", func(t *testing.T) {
		r := env.Do(t, apitest.Request{Method: "POST", Path: "/webhook-endpoints", Key: b.Secret,
			Body: map[string]any{"url": "https://hooks.example.com/b", "events": []string{"*"}}})
		if r.Status != 201 {
			t.Fatalf("create B's endpoint: %d %s", r.Status, r.Body)
		}
		var ep struct{ ID string }
		r.Decode(t, &ep)
		one := "/webhook-endpoints/" + ep.ID
		env.Run(t, []apitest.Case{
			{Name: "get", Key: a.Secret, Path: one, Status: 404, Problem: "not_found"},
			{Name: "patch", Key: a.Secret, Method: "PATCH", Path: one, Body: map[string]any{"url": "https://evil.example.com"}, Status: 404},
			{Name: "rotate", Key: a.Secret, Method: "POST", Path: one + "/rotate-secret", Status: 404},
			{Name: "deliveries", Key: a.Secret, Path: one + "/deliveries", Status: 404},
			{Name: "delete", Key: a.Secret, Method: "DELETE", Path: one, Status: 404},
			{Name: "B's sandbox key", Key: b.TestSecret, Path: one, Status: 404},
			{Name: "list", Key: a.Secret, Path: "/webhook-endpoints", Status: 200, Check: func(t *testing.T, r *apitest.Response) {
				var page struct{ Data []any }
				r.Decode(t, &page)
				if len(page.Data) != 0 {
					t.Errorf("A lists B's endpoints: %s", r.Body)
				}
			}},
			{Name: "B still has it", Key: b.Secret, Path: one, Status: 200},
		})
	})

	t.Run("another company's contracts answer 404", func(t *testing.T) {
		contact := uuid.Must(uuid.NewV7())
		if err := env.Pinned(context.Background(), b.ID, func(tx *sql.Tx) error {
			_, err := tx.Exec(`INSERT INTO contacts (tags, labels, custom_fields, groups, sensitive, sort_name, search_text, id, company_id, type, first_name, last_name, company_name, created_at, updated_at, version)
				VALUES ('[]', '[]', '{}', '{}', '{}', '', '', $1, $2, 'private', 'B', 'Kunde', '', now(), now(), 1)`, contact, b.ID)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		var ins struct{ Data []struct{ ID string } }
		env.Do(t, apitest.Request{Path: "/insurers?vuNumber=5501", Key: b.Secret}).Decode(t, &ins)
		body := map[string]any{"contactId": contact.String(), "insurerId": ins.Data[0].ID, "policyNumber": "B-1",
			"type": "020", "status": "active"}
		r := env.Do(t, apitest.Request{Method: "POST", Path: "/contracts", Key: b.Secret, Body: body})
		var ct struct{ ID string }
		r.Decode(t, &ct)
		one := "/contracts/" + ct.ID
		env.Run(t, []apitest.Case{
			{Name: "get", Key: a.Secret, Path: one, Status: 404, Problem: "not_found"},
			{Name: "patch", Key: a.Secret, Method: "PATCH", Path: one, Body: map[string]any{"status": "ended"}, Status: 404},
			{Name: "delete", Key: a.Secret, Method: "DELETE", Path: one, Status: 404},
			{Name: "B's sandbox key", Key: b.TestSecret, Path: one, Status: 404},
			{Name: "A cannot file a contract under B's contact", Key: a.Secret, Method: "POST", Path: "/contracts", Body: body,
				Status: 422},
			{Name: "A's external upsert does not reach B's contract", Key: a.Secret, Method: "PUT",
				Path: "/external/ams/contracts/B-1", Body: body, Status: 422},
			{Name: "list by B's contact", Key: a.Secret, Path: "/contracts?contactId=" + contact.String(), Status: 200,
				Check: func(t *testing.T, r *apitest.Response) {
					if strings.Contains(string(r.Body), ct.ID) {
						t.Errorf("A's list shows B's contract")
					}
				}},
			{Name: "B still has it", Key: b.Secret, Path: one, Status: 200},
		})
	})

	t.Run("another company's documents answer 404", func(t *testing.T) {
		contact := uuid.Must(uuid.NewV7())
		if err := env.Pinned(context.Background(), b.ID, func(tx *sql.Tx) error {
			_, err := tx.Exec(`INSERT INTO contacts (tags, labels, custom_fields, groups, sensitive, sort_name, search_text, id, company_id, type, first_name, last_name, company_name, created_at, updated_at, version)
				VALUES ('[]', '[]', '{}', '{}', '{}', '', '', $1, $2, 'private', 'B', 'Akte', '', now(), now(), 1)`, contact, b.ID)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		fw, _ := mw.CreateFormFile("file", "B.pdf")
		_, _ = fw.Write([]byte("%PDF-1.4\n%%EOF\n"))
		_ = mw.Close()
		multi := map[string]string{"Content-Type": mw.FormDataContentType()}
		r := env.Do(t, apitest.Request{Method: "POST", Path: "/contacts/" + contact.String() + "/documents", Key: b.Secret,
			Body: buf.Bytes(), Header: multi})
		if r.Status != 201 {
			t.Fatalf("upload: %d %s", r.Status, r.Body)
		}
		var doc struct{ ID string }
		r.Decode(t, &doc)
		one := "/documents/" + doc.ID
		env.Run(t, []apitest.Case{
			{Name: "get", Key: a.Secret, Path: one, Status: 404, Problem: "not_found"},
			{Name: "content", Key: a.Secret, Path: one + "/content", Status: 404, Problem: "not_found"},
			{Name: "delete", Key: a.Secret, Method: "DELETE", Path: one, Status: 404},
			{Name: "B's sandbox key", Key: b.TestSecret, Path: one, Status: 404},
			{Name: "A cannot upload to B's contact", Key: a.Secret, Method: "POST", Path: "/contacts/" + contact.String() + "/documents",
				Body: buf.Bytes(), Header: multi, Status: 404},
			{Name: "list by B's contact", Key: a.Secret, Path: "/documents?contactId=" + contact.String(), Status: 200,
				Check: func(t *testing.T, r *apitest.Response) {
					if strings.Contains(string(r.Body), doc.ID) {
						t.Errorf("A's list shows B's document")
					}
				}},
			{Name: "B still has it", Key: b.Secret, Path: one + "/content", Status: 200},
		})
	})

	t.Run("another company's portfolio mappings answer 404", func(t *testing.T) {
		r := env.Do(t, apitest.Request{Method: "POST", Path: "/portfolio-mappings", Key: b.Secret,
			Body: map[string]any{"name": "B", "columns": map[string]string{"VSNR": "contract.policyNumber"}}})
		var m struct{ ID string }
		r.Decode(t, &m)
		one := "/portfolio-mappings/" + m.ID
		var form bytes.Buffer
		mw := multipart.NewWriter(&form)
		_ = mw.WriteField("format", "csv")
		_ = mw.WriteField("mappingId", m.ID)
		fw, _ := mw.CreateFormFile("file", "a.csv")
		_, _ = fw.Write([]byte("VSNR\nX-1\n"))
		_ = mw.Close()
		env.Run(t, []apitest.Case{
			{Name: "get", Key: a.Secret, Path: one, Status: 404, Problem: "not_found"},
			{Name: "patch", Key: a.Secret, Method: "PATCH", Path: one, Body: map[string]any{"name": "A"}, Status: 404},
			{Name: "delete", Key: a.Secret, Method: "DELETE", Path: one, Status: 404},
			{Name: "B's sandbox key", Key: b.TestSecret, Path: one, Status: 404},
			{Name: "A's transfer cannot use B's mapping", Key: a.Secret, Method: "POST", Path: "/portfolio-transfers",
				Body: form.Bytes(), Header: map[string]string{"Content-Type": mw.FormDataContentType()}, Status: 422,
				Check: func(t *testing.T, r *apitest.Response) {
					if !strings.Contains(string(r.Body), "unknown_mapping") {
						t.Errorf("body %s", r.Body)
					}
				}},
			{Name: "list", Key: a.Secret, Path: "/portfolio-mappings", Status: 200, Check: func(t *testing.T, r *apitest.Response) {
				if strings.Contains(string(r.Body), m.ID) {
					t.Errorf("A lists B's mapping")
				}
			}},
			{Name: "B still has it", Key: b.Secret, Path: one, Status: 200},
		})
	})

	t.Run("company and me name the caller's company", func(t *testing.T) {
		for _, tc := range []struct {
			key  string
			want uuid.UUID
		}{{a.Secret, a.ID}, {b.Secret, b.ID}, {a.TestSecret, a.SandboxID}} {
			var co struct {
				ID uuid.UUID `json:"id"`
			}
			env.Do(t, apitest.Request{Path: "/company", Key: tc.key}).Decode(t, &co)
			if co.ID != tc.want {
				t.Errorf("/company = %s, want %s", co.ID, tc.want)
			}
			var me struct {
				Company struct {
					ID uuid.UUID `json:"id"`
				} `json:"company"`
			}
			env.Do(t, apitest.Request{Path: "/me", Key: tc.key}).Decode(t, &me)
			if me.Company.ID != tc.want {
				t.Errorf("/me company = %s, want %s", me.Company.ID, tc.want)
			}
		}
	})

	t.Run("OAuth tokens are isolated as keys are", func(t *testing.T) {
		aTok, bTok, aTestTok := a.OAuthToken(t, "live"), b.OAuthToken(t, "live"), a.OAuthToken(t, "test")
		env.Run(t, []apitest.Case{
			{Name: "B's user via A's token", Key: aTok, Path: "/users/" + bAgent.ID.String(), Status: 404, Problem: "not_found"},
			{Name: "A's live user via A's sandbox token", Key: aTestTok, Path: "/users/" + aAgent.ID.String(), Status: 404, Problem: "not_found"},
			{Name: "A's sandbox twin via A's live token", Key: aTok, Path: "/users/" + aAgent.SandboxID.String(), Status: 404, Problem: "not_found"},
			{Name: "B's user via B's token", Key: bTok, Path: "/users/" + bAgent.ID.String(), Status: 200},
			{Name: "A's sandbox user via A's sandbox token", Key: aTestTok, Path: "/users/" + aAgent.SandboxID.String(), Status: 200},
			{Name: "A's token lists A's users only", Key: aTok, Path: "/users?limit=200", Status: 200,
				Check: func(t *testing.T, r *apitest.Response) {
					var page struct {
						Data []struct {
							ID uuid.UUID `json:"id"`
						} `json:"data"`
					}
					r.Decode(t, &page)
					if len(page.Data) != 2 || page.Data[0].ID != a.Admin.ID || page.Data[1].ID != aAgent.ID {
						t.Errorf("A's token lists %s", r.Body)
					}
				}},
		})
		for _, tc := range []struct {
			key  string
			want uuid.UUID
		}{{aTok, a.ID}, {bTok, b.ID}, {aTestTok, a.SandboxID}} {
			var co struct {
				ID uuid.UUID `json:"id"`
			}
			env.Do(t, apitest.Request{Path: "/company", Key: tc.key}).Decode(t, &co)
			if co.ID != tc.want {
				t.Errorf("/company with a token = %s, want %s", co.ID, tc.want)
			}
		}
	})

	t.Run("the app role cannot read api_keys", func(t *testing.T) {
		ctx := context.Background()
		err := env.Pinned(ctx, a.ID, func(tx *sql.Tx) error {
			var n int
			return tx.QueryRowContext(ctx, "SELECT count(*) FROM api_keys").Scan(&n)
		})
		if err == nil || !strings.Contains(err.Error(), "permission denied") {
			t.Errorf("the app role read api_keys: %v", err)
		}
	})

	t.Run("the app role cannot change companies", func(t *testing.T) {
		ctx := context.Background()
		tx, err := env.AppDB.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		if _, err := tx.ExecContext(ctx, "SELECT set_config('app.company_id', $1, true)", a.ID.String()); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.ExecContext(ctx, "UPDATE companies SET name = 'x'"); err == nil {
			t.Error("the app role updated companies")
		}
	})
}

// TestIsolation_Contacts: another company's contact and custom fields are 404 or absent on
// every contacts endpoint, for live and sandbox keys.
func TestIsolation_Contacts(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a, b := env.NewCompany(t), env.NewCompany(t)
	r := env.Do(t, apitest.Request{Method: "POST", Path: "/contacts", Key: b.Secret,
		Body: map[string]any{"type": "private", "firstName": "Bea", "lastName": "Fremd", "email": "bea@example.com",
			"externalReferences": []map[string]string{{"source": "ams", "externalId": "B-1"}}}})
	if r.Status != 201 {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	var c struct{ ID string }
	r.Decode(t, &c)
	if r := env.Do(t, apitest.Request{Method: "POST", Path: "/custom-fields", Key: b.Secret,
		Body: map[string]any{"key": "secret", "label": "B only", "dataType": "string"}}); r.Status != 201 {
		t.Fatalf("custom field: %d %s", r.Status, r.Body)
	}
	one := "/contacts/" + c.ID
	h := map[string]string{"If-Match": "*", "Content-Type": "application/merge-patch+json"}
	absent := func(t *testing.T, r *apitest.Response) {
		if strings.Contains(string(r.Body), c.ID) || strings.Contains(string(r.Body), "Fremd") || strings.Contains(string(r.Body), "B only") {
			t.Errorf("B's data in A's answer: %s", r.Body)
		}
	}
	env.Run(t, []apitest.Case{
		{Name: "get", Key: a.Secret, Path: one, Status: 404, Problem: "not_found"},
		{Name: "get via A's sandbox", Key: a.TestSecret, Path: one, Status: 404},
		{Name: "get via B's sandbox", Key: b.TestSecret, Path: one, Status: 404},
		{Name: "patch", Key: a.Secret, Method: "PATCH", Path: one, Header: h, Body: map[string]any{"firstName": "X"}, Status: 404},
		{Name: "delete", Key: a.Secret, Method: "DELETE", Path: one, Header: map[string]string{"If-Match": "*"}, Status: 404},
		{Name: "list", Key: a.Secret, Path: "/contacts?limit=200", Status: 200, Check: absent},
		{Name: "search", Key: a.Secret, Path: "/contacts?q=fremd", Status: 200, Check: absent},
		{Name: "email filter", Key: a.Secret, Path: "/contacts?email=bea@example.com", Status: 200, Check: absent},
		{Name: "custom fields", Key: a.Secret, Path: "/custom-fields", Status: 200, Check: absent},
		{Name: "B's custom field key is free in A", Key: a.Secret, Method: "POST", Path: "/custom-fields", Status: 201,
			Body: map[string]any{"key": "secret", "label": "A", "dataType": "string"}},
		{Name: "B's external reference is free in A", Key: a.Secret, Method: "POST", Path: "/contacts", Status: 201,
			Body: map[string]any{"type": "private", "firstName": "A", "lastName": "A", "externalReferences": []map[string]string{{"source": "ams", "externalId": "B-1"}}}},
		{Name: "match", Key: a.Secret, Method: "POST", Path: "/contacts/match", Body: map[string]any{"email": "bea@example.com", "lastName": "Fremd"},
			Status: 200, Check: absent},
		{Name: "B's external reference via A finds A's own contact", Key: a.Secret, Path: "/external/ams/contacts/B-1", Status: 200, Check: absent},
		{Name: "B's external reference via A's sandbox", Key: a.TestSecret, Path: "/external/ams/contacts/B-1", Status: 404},
		{Name: "bulk with B's reference updates A's own contact", Key: a.Secret, Method: "POST", Path: "/contacts/bulk", Status: 200,
			Body: map[string]any{"items": []map[string]any{{"externalReference": map[string]string{"source": "ams", "externalId": "B-1"},
				"type": "private", "firstName": "A", "lastName": "Own"}}}, Check: absent},
		{Name: "B still has it", Key: b.Secret, Path: one, Status: 200},
		{Name: "B's contact unchanged", Key: b.Secret, Path: "/external/ams/contacts/B-1", Status: 200, Check: func(t *testing.T, r *apitest.Response) {
			if !strings.Contains(string(r.Body), "Fremd") {
				t.Errorf("got %s", r.Body)
			}
		}},
	})
}
