package main

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/mailserver"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
	"github.com/brokerdesk/brokerdesk/tenancy"
	"github.com/brokerdesk/brokerdesk/test/testsvc"
)

// cliMailbox is `mailbox … --json` of one mailbox.
type cliMailbox struct {
	ID, CompanyID, Email, Label, Username, SyncState, SyncError string
	Shared                                                      bool
	OwnerID                                                     *string
	ImapURL, SMTPURL                                            string
}

// sealedOf reads password_sealed of mailbox id as the owner (no RLS, no ent rule in the way).
func sealedOf(t *testing.T, db *sql.DB, id string) []byte {
	t.Helper()
	var b []byte
	if err := db.QueryRow("SELECT password_sealed FROM mailboxes WHERE id = $1", id).Scan(&b); err != nil {
		t.Fatalf("read password_sealed: %v", err)
	}
	return b
}

// TestCLI_Mailbox drives `brokerdesk mailbox` against a real loopback IMAP and SMTP server.
// Bugs it would catch: a --password flag (passwords in shell history and ps); a password read
// from neither MAILBOX_PASSWORD nor stdin; a password stored in the clear, or shown (plain or
// sealed) by list or check; check saying "ok" without logging in, or exiting 0 when a server
// refuses; set-password leaving a paused mailbox paused; create not scheduling the sync; delete
// leaving threads and messages behind (or failing on them).
func TestCLI_Mailbox(t *testing.T) {
	c := newCLI(t)
	c.env["APP_SECRET"] = "mailbox-cli-test-secret-0123456789abcdef"
	ctx := context.Background()
	owner, err := sql.Open("pgx", c.env["DATABASE_URL"])
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Close()

	srv := testsvc.MailServer(t, mailserver.Options{})
	const teamPW, annaPW = "Team passwort mit Leerzeichen 1", "anna-imap-secret-2"
	if err := srv.AddUser("team@makler.test", teamPW); err != nil {
		t.Fatal(err)
	}
	if err := srv.AddUser("anna@makler.test", annaPW); err != nil {
		t.Fatal(err)
	}
	var co struct{ ID string }
	c.json(&co, "company", "create", "--name", "Postfach GmbH", "--features", "emails")
	var u struct{ ID string }
	c.json(&u, "user", "create", "--company", co.ID, "--email", "anna@makler.test")

	// every output of the test, to look for the passwords at the end
	var outputs []string
	runOK := func(args ...string) string {
		t.Helper()
		out, err := c.run(args...)
		outputs = append(outputs, out)
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		return out
	}
	runJSON := func(v any, args ...string) {
		t.Helper()
		out := runOK(append(args, "--json")...)
		if err := json.Unmarshal([]byte(out), v); err != nil {
			t.Fatalf("%v: not JSON: %v\n%s", args, err, out)
		}
	}

	// create: the password from MAILBOX_PASSWORD (stdin ignored then)
	c.env["MAILBOX_PASSWORD"], c.stdin = teamPW, "not this one\n"
	var team cliMailbox
	runJSON(&team, "mailbox", "create", "--company", co.ID, "--email", "Team@Makler.test", "--imap", srv.IMAPURL(),
		"--smtp", srv.SMTPURL(), "--username", "team@makler.test", "--label", "Team", "--shared")
	if team.ID == "" || team.Email != "team@makler.test" || !team.Shared || team.OwnerID != nil || team.SyncState != "active" || team.Label != "Team" {
		t.Fatalf("created %+v", team)
	}
	// create: the password from the first line of stdin
	delete(c.env, "MAILBOX_PASSWORD")
	c.stdin = annaPW + "\nsecond line\n"
	var anna cliMailbox
	runJSON(&anna, "mailbox", "create", "--company", co.ID, "--email", "anna@makler.test", "--imap", srv.IMAPURL(),
		"--smtp", srv.SMTPURL(), "--username", "anna@makler.test", "--owner", u.ID)
	if anna.Shared || anna.OwnerID == nil || *anna.OwnerID != u.ID {
		t.Fatalf("personal mailbox %+v", anna)
	}

	// a visit of the mailboxes due is queued at once (no server runs jobs here): one, however
	// many creates asked for it
	var visits int
	if err := owner.QueryRow(`SELECT count(*) FROM river.river_job WHERE kind = 'email_sync_due' AND state = 'available'`).
		Scan(&visits); err != nil {
		t.Fatal(err)
	}
	if visits != 1 {
		t.Errorf("%d queued visits of the mailboxes due after two creates, want 1", visits)
	}

	// at rest: sealed, bound to the row, never the plaintext
	for _, m := range []struct{ id, pw string }{{team.ID, teamPW}, {anna.ID, annaPW}} {
		b := sealedOf(t, owner, m.id)
		var s schematype.Sealed
		if err := json.Unmarshal(b, &s); err != nil || s.KeyID == "" || len(s.Data) == 0 {
			t.Errorf("password_sealed of %s is not a sealed value: %v %s", m.id, err, b)
		}
		if strings.Contains(string(b), m.pw) || strings.Contains(string(s.Data), m.pw) {
			t.Errorf("password_sealed of %s holds the plaintext password", m.id)
		}
	}

	// list: both, never a password, plain or sealed
	out := runOK("mailbox", "list", "--company", co.ID)
	if strings.Count(out, "\n") != 2 || !strings.Contains(out, team.ID) || !strings.Contains(out, anna.ID) {
		t.Errorf("mailbox list:\n%s", out)
	}
	var listed []map[string]any
	runJSON(&listed, "mailbox", "list")
	if len(listed) != 2 {
		t.Errorf("mailbox list --json: %d mailboxes, want 2", len(listed))
	}
	for _, m := range listed {
		for k := range m {
			if strings.Contains(strings.ToLower(k), "password") || strings.Contains(strings.ToLower(k), "sealed") {
				t.Errorf("mailbox list --json shows %q", k)
			}
		}
	}

	// check: a real login on both servers
	out = runOK("mailbox", "check", team.ID)
	if !strings.Contains(out, "IMAP: ok") || !strings.Contains(out, "SMTP: ok") {
		t.Errorf("check of a working mailbox:\n%s", out)
	}

	// the provider's password changes: check fails, with a non-zero exit, naming both servers
	if err := srv.SetPassword("team@makler.test", "the new one 3"); err != nil {
		t.Fatal(err)
	}
	out, err = c.run("mailbox", "check", team.ID)
	outputs = append(outputs, out)
	if err == nil || strings.Contains(out, "IMAP: ok") || strings.Contains(out, "SMTP: ok") ||
		!strings.Contains(out, "IMAP: ") || !strings.Contains(out, "SMTP: ") {
		t.Errorf("check with a wrong password: err %v\n%s", err, out)
	}
	var checked struct {
		OK         bool
		IMAP, SMTP string
	}
	out, err = c.run("mailbox", "check", team.ID, "--json")
	outputs = append(outputs, out)
	if err == nil || json.Unmarshal([]byte(out[:strings.LastIndex(out, "}")+1]), &checked) != nil || checked.OK || checked.IMAP == "ok" {
		t.Errorf("check --json with a wrong password: err %v %+v\n%s", err, checked, out)
	}

	// the sync paused it; set-password (stdin) resumes it and check works again
	if _, err := owner.Exec("UPDATE mailboxes SET sync_state = 'paused', sync_error = 'LOGIN refused' WHERE id = $1", team.ID); err != nil {
		t.Fatal(err)
	}
	before := sealedOf(t, owner, team.ID)
	c.stdin = "the new one 3\n"
	var resumed cliMailbox
	runJSON(&resumed, "mailbox", "set-password", team.ID)
	var state, syncErr string
	if err := owner.QueryRow("SELECT sync_state, sync_error FROM mailboxes WHERE id = $1", team.ID).Scan(&state, &syncErr); err != nil {
		t.Fatal(err)
	}
	if resumed.SyncState != "active" || state != "active" || syncErr != "" {
		t.Errorf("after set-password: printed %q, stored %q %q; want active without error", resumed.SyncState, state, syncErr)
	}
	if string(sealedOf(t, owner, team.ID)) == string(before) {
		t.Error("set-password kept the old sealed password")
	}
	if out := runOK("mailbox", "check", team.ID); !strings.Contains(out, "IMAP: ok") || !strings.Contains(out, "SMTP: ok") {
		t.Errorf("check after set-password:\n%s", out)
	}

	// update: new servers, label
	var upd cliMailbox
	runJSON(&upd, "mailbox", "update", anna.ID, "--label", "Anna privat", "--smtp", "smtps://mail.example.de:465")
	if upd.Label != "Anna privat" || upd.SMTPURL != "smtps://mail.example.de:465" || upd.ImapURL != srv.IMAPURL() {
		t.Errorf("update: %+v", upd)
	}

	// delete: the mailbox goes with its threads and messages
	thread := uuid.Must(uuid.NewV7())
	coID := uuid.MustParse(co.ID)
	teamID := uuid.MustParse(team.ID)
	client := ent.NewClient(ent.Driver(tenancy.NewDriver(owner)))
	octx := tenancy.WithOperator(ctx)
	tx, err := client.Tx(octx)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.EmailThread.Create().SetID(thread).SetCompanyID(coID).SetMailboxID(teamID).SetSubject("Hallo").
		SetLastMessageAt(time.Now()).SetMessageCount(1).Exec(octx); err != nil {
		t.Fatal(err)
	}
	if err := tx.Email.Create().SetCompanyID(coID).SetThreadID(thread).SetMailboxID(teamID).SetDirection("inbound").
		SetStatus("received").SetMessageID("m1@makler.test").SetSubject("Hallo").Exec(octx); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if out := runOK("mailbox", "delete", team.ID); !strings.Contains(out, "deleted") {
		t.Errorf("delete: %s", out)
	}
	var left int
	if err := owner.QueryRow(`SELECT (SELECT count(*) FROM mailboxes WHERE id = $1) + (SELECT count(*) FROM email_threads WHERE mailbox_id = $1)
		+ (SELECT count(*) FROM emails WHERE mailbox_id = $1)`, team.ID).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if left != 0 {
		t.Errorf("after delete %d rows of the mailbox are left", left)
	}
	if out := runOK("mailbox", "list", "--company", co.ID); strings.Contains(out, team.ID) || !strings.Contains(out, anna.ID) {
		t.Errorf("list after delete:\n%s", out)
	}

	for _, tc := range []struct {
		args  []string
		stdin string
		env   map[string]string
		want  string
	}{
		{args: []string{"mailbox", "create", "--company", co.ID, "--email", "x@makler.test", "--password", "geheim", "--shared"},
			want: "flag provided but not defined: -password"},
		{args: []string{"mailbox", "set-password", anna.ID, "--password", "geheim"}, want: "flag provided but not defined: -password"},
		{args: []string{"mailbox", "create", "--company", co.ID, "--email", "x@makler.test", "--imap", srv.IMAPURL(),
			"--smtp", srv.SMTPURL(), "--username", "x", "--shared"}, want: "no password"},
		{args: []string{"mailbox", "create", "--company", co.ID, "--email", "anna@makler.test", "--imap", srv.IMAPURL(),
			"--smtp", srv.SMTPURL(), "--username", "x", "--shared"}, stdin: "pw\n", want: "has a mailbox with this address"},
		{args: []string{"mailbox", "create", "--company", co.ID, "--email", "y@makler.test", "--imap", "http://x:1",
			"--smtp", srv.SMTPURL(), "--username", "x", "--shared", "--owner", u.ID}, stdin: "pw\n", want: "either --owner or --shared"},
		{args: []string{"mailbox", "create", "--company", "01a20000-0000-7000-8000-000000000000", "--email", "y@makler.test",
			"--imap", srv.IMAPURL(), "--smtp", srv.SMTPURL(), "--username", "x", "--shared"}, stdin: "pw\n", want: "not found"},
		{args: []string{"mailbox", "create", "--company", co.ID, "--email", "y@makler.test", "--imap", srv.IMAPURL(),
			"--smtp", srv.SMTPURL(), "--username", "x", "--shared"}, stdin: "pw\n", env: map[string]string{"APP_SECRET": ""}, want: "DATA_KEYS"},
		{args: []string{"mailbox", "check", team.ID}, want: "not found"},
		{args: []string{"mailbox", "check", "team@makler.test"}, want: "by its id"},
		{args: []string{"mailbox", "delete"}, want: "name one mailbox"},
		{args: []string{"mailbox", "update", anna.ID, "--imap", "ftp://x:1"}, want: "imap must be"},
		{args: []string{"mailbox", "frobnicate"}, want: "unknown subcommand"},
	} {
		c.stdin = tc.stdin
		saved := map[string]string{}
		for k, v := range tc.env {
			saved[k], c.env[k] = c.env[k], v
		}
		out, err := c.run(tc.args...)
		outputs = append(outputs, out)
		if err == nil || !strings.Contains(err.Error()+out, tc.want) {
			t.Errorf("%v: err %v, output %q; want an error saying %q", tc.args, err, out, tc.want)
		}
		for k, v := range saved {
			c.env[k] = v
		}
	}

	// no output of any command shows a password, plain, base64 or sealed
	all := strings.Join(outputs, "\n")
	for _, pw := range []string{teamPW, annaPW, "the new one 3"} {
		if strings.Contains(all, pw) || strings.Contains(all, base64.StdEncoding.EncodeToString([]byte(pw))) {
			t.Errorf("an output shows the password %q", pw)
		}
	}
	var s schematype.Sealed
	if err := json.Unmarshal(sealedOf(t, owner, anna.ID), &s); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(all, base64.StdEncoding.EncodeToString(s.Data)) {
		t.Error("an output shows the sealed password")
	}
}
