// Package mailboxes tests GET /mailboxes: who sees which mailbox (shared, personal, delegated,
// every one), the scope, and company isolation. Mailboxes are made as the operator makes them
// (operator.CreateMailbox, what `brokerdesk mailbox create` calls).
package mailboxes

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/operator"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

func TestMain(m *testing.M) { os.Exit(apitest.Main(m)) }

type mailboxView struct {
	ID        string     `json:"id"`
	Email     string     `json:"email"`
	Label     string     `json:"label"`
	Shared    bool       `json:"shared"`
	OwnerID   *string    `json:"ownerId"`
	SyncState string     `json:"syncState"`
	SyncedAt  *time.Time `json:"syncedAt"`
}

// newMailbox configures a mailbox of company (owner nil: shared) as the operator does.
func newMailbox(t *testing.T, env *apitest.Env, company uuid.UUID, email string, owner *uuid.UUID) operator.Mailbox {
	t.Helper()
	m, err := env.Ops.CreateMailbox(context.Background(), env.Config.DataKeys, operator.NewMailbox{CompanyID: company,
		Email: email, Label: "Postfach " + email, IMAPURL: "imaps://imap.example.de:993", SMTPURL: "smtp://smtp.example.de:587",
		Username: email, Password: "geheimes-passwort-" + email, OwnerID: owner, Shared: owner == nil})
	if err != nil {
		t.Fatalf("create mailbox %s: %v", email, err)
	}
	return m
}

// listed is GET /mailboxes with key: the addresses, sorted as served.
func listed(t *testing.T, env *apitest.Env, key string) ([]mailboxView, []byte) {
	t.Helper()
	r := env.Do(t, apitest.Request{Path: "/mailboxes", Key: key})
	if r.Status != 200 {
		t.Fatalf("GET /mailboxes: %d %s", r.Status, r.Body)
	}
	var body struct {
		Data []mailboxView `json:"data"`
	}
	r.Decode(t, &body)
	return body.Data, r.Body
}

// TestMailboxes_Visibility: the matrix. Bugs it would catch: a personal mailbox listed to a
// colleague (the ent rule or the RLS policy mailbox_visibility lost), a delegate or a user who
// sees everything missing one, an expired delegation still showing it, another company's
// mailbox listed, the sandbox key seeing the live company's mailboxes, a view that leaks the
// servers, the user name or the password.
func TestMailboxes_Visibility(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a, b := env.NewCompany(t), env.NewCompany(t) // no feature "emails": the route needs none
	anna, ben, carl, dora := env.NewUser(t, a, "agent"), env.NewUser(t, a, "agent"), env.NewUser(t, a, "agent"), env.NewUser(t, a, "agent")
	boss := env.NewUser(t, a, "manager")
	a.Delegate(t, anna.ID, carl.ID, nil) // carl sees what anna owns
	past := time.Now().Add(-time.Hour)
	a.Delegate(t, anna.ID, dora.ID, &past) // dora did, until an hour ago

	team := newMailbox(t, env, a.ID, "team@a-makler.test", nil)
	annas := newMailbox(t, env, a.ID, "anna@a-makler.test", &anna.ID)
	bens := newMailbox(t, env, a.ID, "ben@a-makler.test", &ben.ID)
	bTeam := newMailbox(t, env, b.ID, "team@b-makler.test", nil)
	bPersonal := newMailbox(t, env, b.ID, "eva@b-makler.test", &b.Admin.ID)

	const scope = "correspondence:write"
	for _, tc := range []struct {
		who  string
		key  string
		want []operator.Mailbox // in the served order: by address
	}{
		{"anna (owner)", a.UserKey(t, anna, scope), []operator.Mailbox{annas, team}},
		{"ben (agent, not the owner)", a.UserKey(t, ben, scope), []operator.Mailbox{bens, team}},
		{"carl (anna's delegate)", a.UserKey(t, carl, scope), []operator.Mailbox{annas, team}},
		{"dora (delegation expired)", a.UserKey(t, dora, scope), []operator.Mailbox{team}},
		{"manager (sees everything)", a.UserKey(t, boss, scope), []operator.Mailbox{annas, bens, team}},
		{"admin user", a.UserKey(t, a.Admin, scope), []operator.Mailbox{annas, bens, team}},
		{"company key", a.KeyWithScopes(t, scope), []operator.Mailbox{annas, bens, team}},
		{"company key, every scope", a.Secret, []operator.Mailbox{annas, bens, team}},
		{"sandbox key", a.TestSecret, nil},
		{"other company", b.Secret, []operator.Mailbox{bPersonal, bTeam}},
	} {
		got, raw := listed(t, env, tc.key)
		var ids, want []string
		for _, m := range got {
			ids = append(ids, m.Email)
		}
		for _, m := range tc.want {
			want = append(want, m.Email)
		}
		if !slices.Equal(ids, want) {
			t.Errorf("%s lists %v, want %v", tc.who, ids, want)
		}
		for _, leak := range []string{"imap", "smtp", "password", "geheimes", "sealed", "username"} {
			if strings.Contains(strings.ToLower(string(raw)), leak) {
				t.Errorf("%s: the list shows %q: %s", tc.who, leak, raw)
			}
		}
	}

	// the view: what the operator configured, no more
	got, _ := listed(t, env, a.UserKey(t, anna, scope))
	wantView := map[string]mailboxView{
		team.Email:  {ID: team.ID.String(), Email: team.Email, Label: team.Label, Shared: true, SyncState: "active"},
		annas.Email: {ID: annas.ID.String(), Email: annas.Email, Label: annas.Label, OwnerID: ptr(anna.ID.String()), SyncState: "active"},
	}
	for _, m := range got {
		w := wantView[m.Email]
		if m.ID != w.ID || m.Label != w.Label || m.Shared != w.Shared || !eqPtr(m.OwnerID, w.OwnerID) || m.SyncState != w.SyncState || m.SyncedAt != nil {
			t.Errorf("view %+v, want %+v", m, w)
		}
	}
}

// TestMailboxes_SyncState: a mailbox the sync paused says so (a client shows "password
// changed" instead of sending into a dead mailbox). Bug it would catch: the view reading a
// constant or the wrong column.
func TestMailboxes_SyncState(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.NewCompany(t)
	m := newMailbox(t, env, a.ID, "paused@a-makler.test", nil)
	synced := time.Date(2026, 12, 7, 9, 30, 0, 0, time.UTC)
	if _, err := env.OwnerDB.Exec("UPDATE mailboxes SET sync_state = 'paused', sync_error = 'LOGIN refused', synced_at = $2 WHERE id = $1",
		m.ID, synced); err != nil {
		t.Fatal(err)
	}
	got, raw := listed(t, env, a.Secret)
	if len(got) != 1 || got[0].SyncState != "paused" || got[0].SyncedAt == nil || !got[0].SyncedAt.Equal(synced) {
		t.Errorf("paused mailbox listed as %s", raw)
	}
	if strings.Contains(string(raw), "LOGIN refused") {
		t.Errorf("the list shows the server's answer (the operator's business): %s", raw)
	}
}

// TestMailboxes_Errors: the scope is correspondence:write, as the spec says (write, not
// read), and without a credential nothing. Bugs it would catch: the route mounted with the
// read scope or emails:* scopes, or without authentication.
func TestMailboxes_Errors(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.NewCompany(t, "leads", "emails")
	newMailbox(t, env, a.ID, "team@errors.test", nil)
	agent := env.NewUser(t, a, "agent")
	env.Run(t, []apitest.Case{
		{Name: "no key", Path: "/mailboxes", Status: 401, Problem: "missing_credential"},
		{Name: "correspondence:read is not enough", Key: a.KeyWithScopes(t, "correspondence:read"), Path: "/mailboxes",
			Status: 403, Problem: "insufficient_scope"},
		{Name: "emails:write is another scope", Key: a.KeyWithScopes(t, "emails:read", "emails:write"), Path: "/mailboxes",
			Status: 403, Problem: "insufficient_scope"},
		{Name: "an agent's key without the scope", Key: a.UserKey(t, agent, "contacts:read"), Path: "/mailboxes",
			Status: 403, Problem: "insufficient_scope"},
		{Name: "publishable key", Key: a.Publishable, Path: "/mailboxes", Status: 401},
		{Name: "write scope suffices", Key: a.KeyWithScopes(t, "correspondence:write"), Path: "/mailboxes", Status: 200},
		{Name: "POST is not served", Method: "POST", Key: a.Secret, Path: "/mailboxes", Body: `{}`, Status: 405},
	})
}

func ptr(s string) *string { return &s }

func eqPtr(a, b *string) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
