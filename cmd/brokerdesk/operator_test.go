package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/brokerdesk/brokerdesk/test/pgtest"
)

// cli runs the brokerdesk command against a fresh migrated database.
type cli struct {
	t     *testing.T
	env   map[string]string
	stdin string // what the next command reads from stdin
}

func newCLI(t *testing.T) *cli {
	t.Helper()
	ctx := context.Background()
	admin, err := pgtest.Server(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tpl, err := pgtest.Template(ctx, admin)
	if err != nil {
		t.Fatal(err)
	}
	url, drop, err := pgtest.Clone(ctx, admin, tpl, "bd_cli_")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(drop)
	return &cli{t: t, env: map[string]string{"DATABASE_URL": url}}
}

func (c *cli) run(args ...string) (string, error) {
	var out, errOut bytes.Buffer
	err := run(context.Background(), args, func(k string) string { return c.env[k] }, strings.NewReader(c.stdin), &out, &errOut)
	return out.String() + errOut.String(), err
}

func (c *cli) json(v any, args ...string) {
	c.t.Helper()
	out, err := c.run(append(args, "--json")...)
	if err != nil {
		c.t.Fatalf("%v: %v\n%s", args, err, out)
	}
	if err := json.Unmarshal([]byte(out), v); err != nil {
		c.t.Fatalf("%v: output is not JSON: %v\n%s", args, err, out)
	}
}

func TestCLI_Operator(t *testing.T) {
	c := newCLI(t)
	var co struct {
		ID, SandboxID string
		Features      []string
	}
	c.json(&co, "company", "create", "--name", "Müller & Söhne Versicherungsmakler", "--features", "leads,customer_portal")
	if co.ID == "" || co.SandboxID == "" || strings.Join(co.Features, ",") != "leads,customer_portal" {
		t.Fatalf("company %+v", co)
	}
	c.json(&co, "company", "features", "--company", co.ID, "--features", "leads")
	if strings.Join(co.Features, ",") != "leads" {
		t.Errorf("features %v", co.Features)
	}
	out, err := c.run("company", "list")
	if err != nil || !strings.Contains(out, "Müller & Söhne") {
		t.Errorf("company list: %v\n%s", err, out)
	}

	var u struct{ ID, Email, Role string }
	c.json(&u, "user", "create", "--company", co.ID, "--email", " Eva@Example.DE ", "--role", "manager")
	if u.Email != "eva@example.de" || u.Role != "manager" {
		t.Errorf("user %+v", u)
	}

	var sk, pk, tk struct{ ID, Prefix, Key, Kind, Env, Status string }
	c.json(&sk, "key", "create", "--company", co.ID, "--scopes", "users:read,company:read")
	c.json(&pk, "key", "create", "--company", co.ID, "--user", u.ID, "--kind", "publishable", "--domains", "makler.example")
	c.json(&tk, "key", "create", "--company", co.ID, "--env", "test")
	for _, k := range []struct{ got, prefix string }{{sk.Key, "sk_live_"}, {pk.Key, "pk_live_"}, {tk.Key, "sk_test_"}} {
		if !strings.HasPrefix(k.got, k.prefix) || len(k.got) < 40 {
			t.Errorf("key %q, want %s…", k.got, k.prefix)
		}
	}
	out, err = c.run("key", "list", "--company", co.ID)
	if err != nil || strings.Count(out, "\n") != 3 || strings.Contains(out, sk.Key) {
		t.Errorf("key list shows %d lines or a secret: %v\n%s", strings.Count(out, "\n"), err, out)
	}
	var listed []struct{ Key string }
	c.json(&listed, "key", "list")
	for _, l := range listed {
		if l.Key != "" {
			t.Error("key list --json shows a secret")
		}
	}
	c.json(&sk, "key", "deactivate", sk.Prefix)
	if sk.Status != "inactive" {
		t.Errorf("deactivated key status %q", sk.Status)
	}
	if out, err := c.run("key", "delete", tk.ID); err != nil || !strings.Contains(out, "deleted") {
		t.Errorf("delete: %v %s", err, out)
	}

	// a site's own domain below a public suffix is what a key should name
	var below struct{ AllowedDomains []string }
	c.json(&below, "key", "create", "--company", co.ID, "--user", u.ID, "--kind", "publishable", "--domains",
		"example.github.io,www.example.co.uk,localhost")
	if strings.Join(below.AllowedDomains, ",") != "example.github.io,www.example.co.uk,localhost" {
		t.Errorf("allowed domains %v", below.AllowedDomains)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"company", "create", "--name", "X", "--features", "teleportation"}, "not a feature"},
		{[]string{"company", "create"}, "name is required"},
		{[]string{"company", "features", "--company", "nope"}, "--company must be a UUID"},
		{[]string{"user", "create", "--company", co.ID, "--email", "not-an-email"}, "must be an e-mail address"},
		{[]string{"user", "create", "--company", co.ID, "--email", "eva@example.de"}, "exists"},
		{[]string{"user", "create", "--company", co.SandboxID, "--email", "x@example.de"}, "live company"},
		{[]string{"key", "create", "--company", co.ID, "--kind", "publishable"}, "belongs to one user"},
		{[]string{"key", "create", "--company", co.ID, "--scopes", "users:delete"}, "not a scope"},
		// issue 20 item 9: a public suffix as an allowed domain admits every site below it
		{[]string{"key", "create", "--company", co.ID, "--user", u.ID, "--kind", "publishable", "--domains", "makler.example,github.io"}, `"github.io" is a public suffix`},
		{[]string{"key", "create", "--company", co.ID, "--user", u.ID, "--kind", "publishable", "--domains", "co.uk"}, `"co.uk" is a public suffix`},
		{[]string{"key", "create", "--company", co.ID, "--env", "prod"}, "live or test"},
		{[]string{"key", "create", "--company", "01a20000-0000-7000-8000-000000000000"}, "not found"},
		{[]string{"key", "deactivate", "sk_live_nothing"}, "not found"},
		{[]string{"key", "delete"}, "name one key"},
		{[]string{"frobnicate"}, "unknown command"},
	} {
		out, err := c.run(tc.args...)
		if err == nil || !strings.Contains(err.Error()+out, tc.want) {
			t.Errorf("%v: err %v, output %q; want an error saying %q", tc.args, err, out, tc.want)
		}
	}
}

func TestCLI_NoDatabase(t *testing.T) {
	var out bytes.Buffer
	err := run(context.Background(), []string{"key", "list"}, func(string) string { return "" }, strings.NewReader(""), &out, &out)
	if err == nil || !strings.Contains(err.Error(), "DATABASE_URL") {
		t.Errorf("err %v, want one naming DATABASE_URL", err)
	}
}

func TestCLI_OAuthClientsAndPasswords(t *testing.T) {
	c := newCLI(t)
	var co struct{ ID string }
	c.json(&co, "company", "create", "--name", "OAuth GmbH")
	var u struct{ ID, Email string }
	c.json(&u, "user", "create", "--company", co.ID, "--email", "anna@example.de")

	c.stdin = "a long enough password\n"
	if out, err := c.run("user", "set-password", "--company", co.ID, "--user", "anna@example.de"); err != nil || !strings.Contains(out, "password set") {
		t.Fatalf("set-password: %v %s", err, out)
	}
	c.stdin = "short\n"
	if _, err := c.run("user", "set-password", "--company", co.ID, "--user", u.ID); err == nil || !strings.Contains(err.Error(), "at least 10") {
		t.Errorf("short password: %v", err)
	}

	var cl struct {
		ID, Name, Secret, Env, Status string
		RedirectURIs                  []string
		Public                        bool
		CompanyID                     *string
	}
	c.json(&cl, "oauth-client", "create", "--name", "Partner", "--redirect-uri", "https://p.example/cb",
		"--redirect-uri", "http://localhost:9000/cb", "--scopes", "contacts:read,leads:read")
	if !strings.HasPrefix(cl.Secret, "bdcs_") || len(cl.RedirectURIs) != 2 || cl.CompanyID != nil || cl.Env != "live" {
		t.Fatalf("client %+v", cl)
	}
	first := cl.Secret
	out, err := c.run("oauth-client", "list")
	if err != nil || !strings.Contains(out, cl.ID) || strings.Contains(out, first) {
		t.Errorf("list shows the client without its secret: %v\n%s", err, out)
	}
	c.json(&cl, "oauth-client", "rotate-secret", cl.ID)
	if cl.Secret == "" || cl.Secret == first {
		t.Errorf("rotate-secret: %q", cl.Secret)
	}
	c.json(&cl, "oauth-client", "disable", cl.ID)
	if cl.Status != "disabled" {
		t.Errorf("disable: %q", cl.Status)
	}
	var pub struct {
		Secret    string
		Public    bool
		CompanyID *string
		Env       string
	}
	c.json(&pub, "oauth-client", "create", "--name", "SPA", "--redirect-uri", "https://spa.example/cb", "--scopes",
		"contacts:read", "--public", "--company", co.ID, "--env", "test")
	if pub.Secret != "" || !pub.Public || pub.CompanyID == nil || *pub.CompanyID != co.ID || pub.Env != "test" {
		t.Errorf("public client %+v", pub)
	}
	if out, err := c.run("oauth-client", "delete", cl.ID); err != nil || !strings.Contains(out, "deleted") {
		t.Errorf("delete: %v %s", err, out)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"oauth-client", "create", "--name", "X", "--scopes", "contacts:read"}, "at least one redirect URI"},
		{[]string{"oauth-client", "create", "--name", "X", "--scopes", "contacts:read", "--redirect-uri", "http://evil.example/cb"}, "absolute https URI"},
		{[]string{"oauth-client", "create", "--name", "X", "--scopes", "contacts:read", "--redirect-uri", "https://a.example/cb#x"}, "without fragment"},
		{[]string{"oauth-client", "create", "--name", "X", "--scopes", "*", "--redirect-uri", "https://a.example/cb"}, "not a scope"},
		{[]string{"oauth-client", "create", "--redirect-uri", "https://a.example/cb", "--scopes", "contacts:read"}, "name is required"},
		{[]string{"oauth-client", "rotate-secret", "01a20000-0000-7000-8000-000000000000"}, "not found"},
		{[]string{"oauth-client", "disable"}, "name one client"},
		{[]string{"user", "set-password", "--company", co.ID, "--user", "nobody@example.de"}, "not found"},
	} {
		c.stdin = "a long enough password\n"
		out, err := c.run(tc.args...)
		if err == nil || !strings.Contains(err.Error()+out, tc.want) {
			t.Errorf("%v: err %v, output %q; want an error saying %q", tc.args, err, out, tc.want)
		}
	}
}
