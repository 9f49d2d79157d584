package mailsync

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brokerdesk/brokerdesk/app"
	"github.com/brokerdesk/brokerdesk/app/emails"
	"github.com/brokerdesk/brokerdesk/app/platform/mailserver"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// TestSync_RefusedLoginPauses: when the server refuses the mailbox's password (changed on the
// server), the sync pauses the mailbox with the reason, records one mailbox.sync_paused whose
// data is the mailbox as GET /mailboxes lists it, and later runs neither log in nor record
// again. Catches a refused login treated as a passing failure (retried every period, locking
// the account at the provider), an event per attempt, a password in the error.
func TestSync_RefusedLoginPauses(t *testing.T) {
	t.Parallel()
	w := newWorld(t, mailserver.Options{})
	w.sync(t)
	if err := w.srv.SetPassword(w.addr, "neues-passwort"); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		rep, err := module(t, w.env).SyncMailbox(ctxT(t), w.co.ID, w.box.ID, emails.SyncOptions{})
		if err != nil || !rep.Paused || rep.Selects != 0 {
			t.Fatalf("sync with a refused login = %+v, %v; want paused, no error, no SELECT", rep, err)
		}
	}
	mb := w.mailbox(t)
	if mb.SyncState != "paused" || mb.SyncError == "" || strings.Contains(mb.SyncError, password) {
		t.Errorf("mailbox: state %s error %q", mb.SyncState, mb.SyncError)
	}
	evs := w.events(t, "mailbox.sync_paused")
	if len(evs) != 1 {
		t.Fatalf("%d mailbox.sync_paused events, want 1", len(evs))
	}
	var data map[string]any
	if err := json.Unmarshal(evs[0].Data, &data); err != nil {
		t.Fatal(err)
	}
	if len(data) != 4 || data["id"] != w.box.ID.String() || data["email"] != w.addr || data["label"] != "Büro" || data["shared"] != true {
		t.Errorf("event data %v, want {id, email, label, shared} of the mailbox", data)
	}
}

// TestSync_OtherFailureMarksFailing: a server that does not answer marks the mailbox failing
// with the reason (and it stays eligible: the next period tries again); a later good run
// makes it active again. Catches an outage that pauses a mailbox for good or leaves no trace.
func TestSync_OtherFailureMarksFailing(t *testing.T) {
	t.Parallel()
	w := newWorld(t, mailserver.Options{})
	if err := w.srv.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := module(t, w.env).SyncMailbox(ctxT(t), w.co.ID, w.box.ID, emails.SyncOptions{}); err == nil {
		t.Fatal("sync against a closed server succeeded")
	}
	if mb := w.mailbox(t); mb.SyncState != "failing" || mb.SyncError == "" {
		t.Errorf("mailbox after an outage: %s %q, want failing with the reason", mb.SyncState, mb.SyncError)
	}
	if n := len(w.events(t, "mailbox.sync_paused")); n != 0 {
		t.Errorf("%d pause events for an outage", n)
	}
}

// loginCounter counts the LOGIN commands the mail server's IMAP side receives.
type loginCounter struct {
	mu sync.Mutex
	n  int
}

func (c *loginCounter) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, l := range strings.Split(string(p), "\n") {
		if strings.Contains(strings.ToUpper(l), " LOGIN ") {
			c.n++
		}
	}
	return len(p), nil
}

func (c *loginCounter) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// TestSync_PeriodicJobs: with the server's jobs running (MAIL_SYNC_EVERY 1s) a company's
// mailbox is synced by itself (found through mailbox_sync_due), again when new mail arrives; after the password changes on the
// server it is paused with one event and then left alone: no further login in the periods that
// follow. Catches a periodic visit that misses a mailbox, a paused mailbox still queued every
// period (a retry storm against the provider), duplicates from overlapping runs.
func TestSync_PeriodicJobs(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, app.WithConfig(func(c *app.Config) { c.Mail.SyncEvery = time.Second }))
	if err := env.Server.StartJobs(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		_ = env.Server.StopJobs(sctx)
	})
	logins := &loginCounter{}
	w := newWorld(t, mailserver.Options{Debug: logins})
	w.deliver(t, w.customerMail("Erste", "p1@privat.test").raw())
	waitFor(t, "the first message", func() bool { return len(w.emails(t)) == 1 })
	w.deliver(t, w.customerMail("Zweite", "p2@privat.test").raw())
	waitFor(t, "the second message", func() bool { return len(w.emails(t)) == 2 })
	time.Sleep(2 * time.Second) // more periods: nothing stored twice
	if n := len(w.emails(t)); n != 2 {
		t.Fatalf("%d emails after more periods, want 2", n)
	}

	if err := w.srv.SetPassword(w.addr, "geaendert"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the pause", func() bool { return w.mailbox(t).SyncState == "paused" })
	settled := logins.count()
	if settled == 0 {
		t.Fatal("the login counter saw no LOGIN: it would see none after the pause either")
	}
	time.Sleep(3500 * time.Millisecond) // three periods and more
	if got := logins.count(); got != settled {
		t.Errorf("%d logins after the pause, want none", got-settled)
	}
	if n := len(w.events(t, "mailbox.sync_paused")); n != 1 {
		t.Errorf("%d mailbox.sync_paused events, want 1", n)
	}
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
