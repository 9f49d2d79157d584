// Package doctemplates tests document templates, standard documents and POST
// /documents/generate: the seeded German defaults, the PDFs as poppler-utils and pdfcpu read
// them, the 422s of bad references, variables and placeholders, visibility, isolation,
// idempotency and the operator CLI.
package doctemplates

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
	"github.com/brokerdesk/brokerdesk/test/apitest"
	"github.com/brokerdesk/brokerdesk/test/testsvc"
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

// poppler runs a poppler-utils tool on a PDF and returns its output. The tools are found (or
// installed) by testsvc.Poppler; without them the test fails, never skips.
func poppler(t *testing.T, tool string, pdf []byte, args ...string) string {
	t.Helper()
	dir, err := testsvc.Poppler(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "in.pdf")
	if err := os.WriteFile(f, pdf, 0o600); err != nil {
		t.Fatal(err)
	}
	args = append(args, f)
	if tool == "pdftotext" {
		args = append(args, "-")
	}
	var out, stderr bytes.Buffer
	cmd := exec.Command(filepath.Join(dir, tool), args...)
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v: %s", tool, err, stderr.String())
	}
	return out.String()
}

// text is what pdftotext reads from a PDF, white space collapsed.
func text(t *testing.T, pdf []byte) string {
	t.Helper()
	return strings.Join(strings.Fields(poppler(t, "pdftotext", pdf)), " ")
}

// assertFontsEmbedded fails unless pdffonts lists fonts and each is embedded ("emb" yes).
func assertFontsEmbedded(t *testing.T, pdf []byte) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(poppler(t, "pdffonts", pdf)), "\n")
	if len(lines) < 3 {
		t.Fatalf("pdffonts lists no font:\n%s", strings.Join(lines, "\n"))
	}
	// columns: name type encoding emb sub uni object ID; emb is the 4th from the right
	for _, l := range lines[2:] {
		f := strings.Fields(l)
		if len(f) < 7 || f[len(f)-5] != "yes" {
			t.Errorf("font not embedded: %q", l)
		}
	}
}

// handPDF builds a minimal PDF by hand from object bodies (object 1 the catalog) with a correct
// cross-reference table: the shape of a hostile file our writer never produces.
func handPDF(objs ...string) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.7\n")
	offs := make([]int, len(objs))
	for i, o := range objs {
		offs[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, o := range offs {
		fmt.Fprintf(&b, "%010d 00000 n \n", o)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return b.Bytes()
}
