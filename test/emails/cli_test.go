package emails

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// TestTemplateCLI: `brokerdesk template create` stores a template from files that the API then
// lists with its placeholders, and `template seed` adds back a missing default. Catches a
// command not wired into run, a body file not read, a seed that adds nothing or everything.
func TestTemplateCLI(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	co := newCompany(t, env)
	dir := t.TempDir()
	text, html := filepath.Join(dir, "body.txt"), filepath.Join(dir, "body.html")
	if err := os.WriteFile(text, []byte("Hallo {{contact.firstName}},\n\nIhre Police liegt bei.\n{{user.name}}"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(html, []byte("<p>Hallo {{contact.firstName}}</p><p>{{company.name}}</p>"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := env.CLI(t, "template", "create", "--company", co.ID.String(), "--name", "Police versandt", "--subject",
		"Ihre Police {{contract.number}}", "--text-file", text, "--html-file", html, "--category", "Verträge", "--json")
	var created struct {
		ID           string   `json:"id"`
		Placeholders []string `json:"placeholders"`
	}
	if err := json.Unmarshal([]byte(out), &created); err != nil {
		t.Fatalf("template create printed %q: %v", out, err)
	}
	var found *template
	for _, x := range templates(t, env, co.KeyWithScopes(t, "emails:read")) {
		if x.ID == created.ID {
			found = &x
		}
	}
	if found == nil || found.Category == nil || *found.Category != "Verträge" || found.BodyText == "" ||
		len(found.Placeholders) != 4 {
		t.Fatalf("listed %+v", found)
	}

	ctx := context.Background()
	err := env.Operator(ctx, co.ID, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM email_templates WHERE company_id = $1 AND name = 'Terminbestätigung'`, co.ID)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var added []struct {
		Name string `json:"name"`
	}
	out = env.CLI(t, "template", "seed", "--company", co.ID.String(), "--json")
	if err := json.Unmarshal([]byte(out), &added); err != nil || len(added) != 1 || added[0].Name != "Terminbestätigung" {
		t.Fatalf("template seed printed %q (%v)", out, err)
	}
}
