// Package doctemplates tests document templates, standard documents and POST
// /documents/generate: the seeded German defaults, the PDFs as poppler-utils and pdfcpu read
// them, the 422s of bad references, variables and placeholders, visibility, isolation,
// idempotency and the operator CLI.
package doctemplates

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

func TestMain(m *testing.M) { os.Exit(apitest.Main(m)) }

type template struct {
	ID                 string   `json:"id"`
	Name               string   `json:"name"`
	Category           string   `json:"category"`
	Placeholders       []string `json:"placeholders"`
	HasSignatureFields bool     `json:"hasSignatureFields"`
	SignatureRoles     []string `json:"signatureRoles"`
}

type standardDoc struct {
	ID                 string `json:"id"`
	Name               string `json:"name"`
	Filename           string `json:"filename"`
	SizeBytes          int64  `json:"sizeBytes"`
	HasSignatureFields bool   `json:"hasSignatureFields"`
}

type document struct {
	ID         string  `json:"id"`
	ContactID  string  `json:"contactId"`
	ContractID *string `json:"contractId"`
	Type       string  `json:"type"`
	Filename   string  `json:"filename"`
	SizeBytes  int64   `json:"sizeBytes"`
	Sha256     string  `json:"sha256"`
}

// signing is a company licensing digital_signature (standard documents need it).
func signing(t *testing.T, env *apitest.Env) *apitest.Company {
	return env.NewCompany(t, "leads", "digital_signature")
}

// templates lists the company's templates by name.
func templates(t *testing.T, env *apitest.Env, key string) map[string]template {
	t.Helper()
	var body struct{ Data []template }
	r := env.Do(t, apitest.Request{Path: "/document-templates", Key: key})
	if r.Status != 200 {
		t.Fatalf("list templates: %d %s", r.Status, r.Body)
	}
	r.Decode(t, &body)
	out := map[string]template{}
	for _, x := range body.Data {
		out[x.Name] = x
	}
	return out
}

func standardDocs(t *testing.T, env *apitest.Env, key string) map[string]standardDoc {
	t.Helper()
	var body struct{ Data []standardDoc }
	r := env.Do(t, apitest.Request{Path: "/standard-documents", Key: key})
	if r.Status != 200 {
		t.Fatalf("list standard documents: %d %s", r.Status, r.Body)
	}
	r.Decode(t, &body)
	out := map[string]standardDoc{}
	for _, x := range body.Data {
		out[x.Name] = x
	}
	return out
}

// newContact stores a private contact (owner optional) with salutation, address and date of
// birth.
func newContact(t *testing.T, env *apitest.Env, company uuid.UUID, first, last string, owner *uuid.UUID) string {
	t.Helper()
	var id string
	env.InCompany(t, company, func(ctx context.Context, db *ent.Client) error {
		c, err := db.Contact.Create().SetType("private").SetFirstName(first).SetLastName(last).SetNillableOwnerID(owner).
			SetGroups(schematype.ContactGroups{
				"address":  {"street": "Königsallee", "houseNumber": "5a", "zipCode": "40212", "city": "Düsseldorf"},
				"personal": {"salutation": "Herr", "dateOfBirth": "1961-03-01"}}).Save(ctx)
		if err == nil {
			id = c.ID.String()
		}
		return err
	})
	return id
}

var vuSeq atomic.Int64

// newContract adds an insurer to the catalog and a contract of contact with it.
func newContract(t *testing.T, env *apitest.Env, key, contact, policy string) string {
	t.Helper()
	vu := fmt.Sprintf("8%04d", vuSeq.Add(1))
	if _, err := env.Ops.SetInsurer(context.Background(), vu, "Nordstern Versicherung AG "+vu); err != nil {
		t.Fatal(err)
	}
	r := env.Do(t, apitest.Request{Path: "/insurers?vuNumber=" + vu, Key: key})
	var ins struct{ Data []struct{ ID string } }
	r.Decode(t, &ins)
	if r.Status != 200 || len(ins.Data) != 1 {
		t.Fatalf("insurer %s: %d %s", vu, r.Status, r.Body)
	}
	c := apitest.Create[struct{ ID string }](t, env, key, "/contracts", map[string]any{"contactId": contact,
		"insurerId": ins.Data[0].ID, "policyNumber": policy, "type": "050", "status": "active", "startDate": "2025-01-01",
		"premium": "1234.50", "paymentFrequency": "yearly"})
	return c.ID
}

// generate POSTs a generation and fails unless it is 201.
func generate(t *testing.T, env *apitest.Env, key string, body map[string]any) document {
	t.Helper()
	r := env.Do(t, apitest.Request{Method: "POST", Path: "/documents/generate", Key: key, Body: body})
	if r.Status != 201 {
		t.Fatalf("generate: %d %s", r.Status, r.Body)
	}
	var d document
	r.Decode(t, &d)
	if loc := r.Header.Get("Location"); loc != "/api/public/v1/documents/"+d.ID {
		t.Errorf("Location %q", loc)
	}
	return d
}

// content downloads a document's bytes.
func content(t *testing.T, env *apitest.Env, key, path string) []byte {
	t.Helper()
	r := env.Do(t, apitest.Request{Path: path, Key: key})
	if r.Status != 200 {
		t.Fatalf("GET %s: %d %s", path, r.Status, r.Body)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/pdf" {
		t.Errorf("GET %s: Content-Type %q", path, ct)
	}
	return r.Body
}
