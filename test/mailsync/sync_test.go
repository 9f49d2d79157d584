package mailsync

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2/imapclient"

	"github.com/brokerdesk/brokerdesk/app/emails"
	"github.com/brokerdesk/brokerdesk/app/platform/mailserver"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/email"
	"github.com/brokerdesk/brokerdesk/ent/mailboxfolder"
)

// TestSync_FirstSync: N unrelated messages become N threads of one message each, stored as
// received inbound mail with their headers, searchable text and one email.received each; a
// second sync with nothing new costs one SELECT per folder and fetches nothing. Catches a
// lost message, a message counted twice, a missing event, a sync that fetches although
// UIDNEXT says nothing is new.
func TestSync_FirstSync(t *testing.T) {
	t.Parallel()
	w := newWorld(t, mailserver.Options{})
	const n = 7
	for i, id := range ids(n) {
		m := w.customerMail(fmt.Sprintf("Anfrage Nummer %d", i), id)
		m.Cc = "Partnerin <partnerin@privat.test>"
		w.deliver(t, m.raw())
	}
	rep := w.sync(t)
	if rep.Fetched != n || rep.Stored != n || rep.Duplicates != 0 || rep.Selects != 2 {
		t.Fatalf("first sync = %+v, want %d fetched and stored, 2 selects (INBOX, Sent)", rep, n)
	}
	es := w.emails(t)
	if len(es) != n {
		t.Fatalf("%d emails, want %d", len(es), n)
	}
	for _, e := range es {
		if e.Direction != email.DirectionInbound || e.Status != email.StatusReceived || e.Folder != "INBOX" || e.ImapUID == 0 {
			t.Errorf("email %q: direction %s status %s folder %q uid %d", e.Subject, e.Direction, e.Status, e.Folder, e.ImapUID)
		}
		if e.FromAddress != "kunde@privat.test" || e.FromName != "Kunde" || len(e.Cc) != 1 || e.Cc[0].Email != "partnerin@privat.test" {
			t.Errorf("email %q: from %q %q cc %v", e.Subject, e.FromName, e.FromAddress, e.Cc)
		}
		if !strings.Contains(e.SearchText, strings.ToLower(e.Subject)) || !strings.Contains(e.SearchText, "partnerin@privat.test") ||
			!strings.Contains(e.SearchText, "rückruf") {
			t.Errorf("email %q: search text %q lacks subject, addresses or text", e.Subject, e.SearchText)
		}
		if e.RawKey == "" || e.SizeBytes == 0 || e.Error != "" {
			t.Errorf("email %q: raw key %q size %d error %q", e.Subject, e.RawKey, e.SizeBytes, e.Error)
		}
	}
	ts := w.threads(t)
	if len(ts) != n {
		t.Fatalf("%d threads, want %d", len(ts), n)
	}
	for _, th := range ts {
		if th.MessageCount != 1 || !strings.HasPrefix(th.SubjectKey, "anfrage nummer") {
			t.Errorf("thread %q: %d messages, key %q", th.Subject, th.MessageCount, th.SubjectKey)
		}
	}
	if got := len(w.events(t, "email.received")); got != n {
		t.Errorf("%d email.received events, want %d", got, n)
	}
	mb := w.mailbox(t)
	if mb.SyncState != "active" || mb.SyncedAt == nil || mb.SentFolder != "Sent" {
		t.Errorf("mailbox after sync: state %s synced %v sent folder %q", mb.SyncState, mb.SyncedAt, mb.SentFolder)
	}

	rep = w.sync(t)
	if rep.Selects != 2 || rep.Fetched != 0 {
		t.Errorf("sync with nothing new = %+v, want 2 selects and nothing fetched", rep)
	}
}

// TestSync_ReplyJoinsThread: an incremental sync fetches only the new reply, which joins the
// thread of the message its In-Reply-To names; the thread counts two messages and its
// last_message_at moves to the reply. Catches a sync that starts over (fetching everything
// again), a reply filed as a thread of its own, counters left behind.
func TestSync_ReplyJoinsThread(t *testing.T) {
	t.Parallel()
	w := newWorld(t, mailserver.Options{})
	orig, other := w.customerMail("Kfz-Versicherung", "orig@privat.test"), w.customerMail("Hausrat", "other@privat.test")
	orig.Date = time.Now().Add(-2 * time.Hour)
	w.deliver(t, orig.raw(), other.raw())
	w.sync(t)

	reply := w.customerMail("AW: Kfz-Versicherung – Nachtrag", "reply@privat.test")
	reply.InReplyTo = "orig@privat.test"
	w.deliver(t, reply.raw())
	rep := w.sync(t)
	if rep.Fetched != 1 || rep.Stored != 1 {
		t.Fatalf("incremental sync = %+v, want the one new message", rep)
	}
	o, r := w.bySubject(t, orig.Subject), w.bySubject(t, reply.Subject)
	if r.ThreadID != o.ThreadID || r.InReplyTo != "orig@privat.test" {
		t.Fatalf("reply in thread %s (in-reply-to %q), original in %s", r.ThreadID, r.InReplyTo, o.ThreadID)
	}
	th := w.thread(t, o.ThreadID)
	if th.MessageCount != 2 || !th.LastMessageAt.Equal(*r.SentAt) {
		t.Errorf("thread: %d messages, last at %v, want 2 and %v", th.MessageCount, th.LastMessageAt, r.SentAt)
	}
	if len(w.threads(t)) != 2 {
		t.Errorf("%d threads, want 2", len(w.threads(t)))
	}
}

// TestSync_References: a reply without In-Reply-To joins through References, read newest
// first: the thread of the newest referenced message we hold wins, and ids we do not hold are
// skipped. Catches References ignored, read oldest first, or a lookup that stops at an
// unknown id.
func TestSync_References(t *testing.T) {
	t.Parallel()
	w := newWorld(t, mailserver.Options{})
	a, b := w.customerMail("Erstanfrage", "a@privat.test"), w.customerMail("Ganz anderes Thema", "b@privat.test")
	w.deliver(t, a.raw(), b.raw())
	w.sync(t)

	onlyA := w.customerMail("Nochmal", "c@privat.test")
	onlyA.References = "<a@privat.test> <unbekannt@privat.test>"
	both := w.customerMail("Beides", "d@privat.test")
	both.References = "<a@privat.test> <b@privat.test> <nie-gesehen@privat.test>"
	w.deliver(t, onlyA.raw(), both.raw())
	w.sync(t)
	if got, want := w.bySubject(t, "Nochmal").ThreadID, w.bySubject(t, "Erstanfrage").ThreadID; got != want {
		t.Errorf("References-only reply in thread %s, want %s", got, want)
	}
	if got, want := w.bySubject(t, "Beides").ThreadID, w.bySubject(t, "Ganz anderes Thema").ThreadID; got != want {
		t.Errorf("reply referencing a then b in thread %s, want b's %s (newest first)", got, want)
	}
}

// TestSync_SubjectFallback: inbound mail with neither In-Reply-To nor References joins the
// thread of the same normalised subject whose last message is within 30 days; not one older,
// not one whose headers name a message we do not hold, not outbound mail. Catches a fallback
// that ignores the window (a new enquiry months later glued to an old case), that overrides
// the headers, or that applies to mail the broker sent.
func TestSync_SubjectFallback(t *testing.T) {
	t.Parallel()
	w := newWorld(t, mailserver.Options{})
	recent := w.customerMail("Angebot Wohngebäude", "recent@privat.test")
	recent.Date = time.Now().Add(-10 * 24 * time.Hour)
	old := w.customerMail("Schadenmeldung", "old@privat.test")
	old.Date = time.Now().Add(-60 * 24 * time.Hour)
	w.deliver(t, recent.raw(), old.raw())
	w.sync(t)

	joins := w.customerMail("AW: WG: angebot  wohngebäude", "joins@privat.test")
	late := w.customerMail("Re: Schadenmeldung", "late@privat.test")
	headed := w.customerMail("Re: Angebot Wohngebäude", "headed@privat.test")
	headed.InReplyTo = "anderswo@privat.test"
	w.deliver(t, joins.raw(), late.raw(), headed.raw())
	sent := msg{From: w.addr, To: "kunde@privat.test", Subject: "Re: Angebot Wohngebäude", ID: "desk@firma.test", Body: "Anbei."}
	w.appendSent(t, sent.raw())
	w.sync(t)

	base := w.bySubject(t, recent.Subject).ThreadID
	if got := w.bySubject(t, joins.Subject).ThreadID; got != base {
		t.Errorf("AW: without headers in thread %s, want %s (subject fallback)", got, base)
	}
	if got := w.bySubject(t, late.Subject).ThreadID; got == w.bySubject(t, old.Subject).ThreadID {
		t.Error("reply by subject joined a thread whose last message is 60 days old")
	}
	if got := w.bySubject(t, headed.Subject).ThreadID; got == base {
		t.Error("a message with In-Reply-To joined by subject")
	}
	for _, e := range w.emails(t) {
		if e.MessageID == "desk@firma.test" {
			if e.Direction != email.DirectionOutbound || e.Status != email.StatusSent || e.Folder != "Sent" {
				t.Errorf("mail from Sent: direction %s status %s folder %q", e.Direction, e.Status, e.Folder)
			}
			if e.ThreadID == base {
				t.Error("outbound mail without headers joined by subject")
			}
		}
	}
	if got := w.thread(t, base).MessageCount; got != 2 {
		t.Errorf("fallback thread has %d messages, want 2", got)
	}
}

// TestSync_UIDValidityChange: when the server numbers a folder anew (UIDVALIDITY changed:
// here Sent deleted and created again), the folder is read from UID 0: the new messages at low
// UIDs are stored, the ones held already are recognised by Message-ID. Catches a sync that
// keeps the old last UID (the new messages, below it, would never be fetched) and one that
// stores the known messages twice.
func TestSync_UIDValidityChange(t *testing.T) {
	t.Parallel()
	w := newWorld(t, mailserver.Options{})
	sent := func(i int) []byte {
		return msg{From: w.addr, To: "kunde@privat.test", Subject: fmt.Sprintf("Ausgang %d", i), ID: fmt.Sprintf("out%d@firma.test", i), Body: "x"}.raw()
	}
	w.appendSent(t, sent(1), sent(2), sent(3))
	if rep := w.sync(t); rep.Stored != 3 {
		t.Fatalf("first sync stored %d, want 3", rep.Stored)
	}

	c, err := imapclient.DialInsecure(w.srv.IMAPAddr(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Login(w.addr, password).Wait(); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete("Sent").Wait(); err != nil {
		t.Fatal(err)
	}
	if err := c.Create("Sent", nil).Wait(); err != nil {
		t.Fatal(err)
	}
	w.appendSent(t, sent(4), sent(2), sent(5)) // UIDs 1..3 in the new numbering

	rep := w.sync(t)
	if rep.Resets != 1 || rep.Stored != 2 || rep.Duplicates != 1 {
		t.Fatalf("sync after UIDVALIDITY change = %+v, want 1 reset, 2 stored, 1 duplicate", rep)
	}
	if got := len(w.emails(t)); got != 5 {
		t.Errorf("%d emails, want 5", got)
	}
}

// TestSync_ResumesAfterInterruption: a sync interrupted inside a batch's transaction (the
// context cancelled right before its commit, as a killed process) leaves the batches committed
// before it and nothing of the interrupted one; the next sync stores exactly the rest. Every
// message is stored once and the folder's last UID is the last message's. Catches a last UID
// committed apart from its messages (messages skipped or stored twice after a kill) and an
// interruption recorded as a failure of the mailbox.
func TestSync_ResumesAfterInterruption(t *testing.T) {
	t.Parallel()
	w := newWorld(t, mailserver.Options{})
	const n = 25
	for i, id := range ids(n) {
		w.deliver(t, w.customerMail(fmt.Sprintf("Nachricht %02d", i), id).raw())
	}
	ctx, cancel := context.WithCancel(ctxT(t))
	batches := 0
	_, err := module(t, w.env).SyncMailbox(ctx, w.co.ID, w.box.ID, emails.SyncOptions{Batch: 10,
		BeforeCommit: func(_ context.Context, folder string, last uint32) {
			batches++
			if batches == 2 {
				cancel() // the second batch (UIDs 11..20) never commits
			}
		}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted sync: %v, want context.Canceled", err)
	}
	if got := len(w.emails(t)); got != 10 {
		t.Fatalf("%d emails after the interruption, want the first batch's 10", got)
	}
	if mb := w.mailbox(t); mb.SyncState != "active" || mb.SyncError != "" {
		t.Errorf("interruption recorded on the mailbox: %s %q", mb.SyncState, mb.SyncError)
	}

	rep, err := module(t, w.env).SyncMailbox(ctxT(t), w.co.ID, w.box.ID, emails.SyncOptions{Batch: 10})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Fetched != 15 || rep.Stored != 15 || rep.Duplicates != 0 {
		t.Errorf("resumed sync = %+v, want exactly the 15 left", rep)
	}
	seen := map[string]int{}
	for _, e := range w.emails(t) {
		seen[e.Subject]++
	}
	for i := range n {
		if s := fmt.Sprintf("Nachricht %02d", i); seen[s] != 1 {
			t.Errorf("%s stored %d times", s, seen[s])
		}
	}
	w.in(t, func(ctx context.Context, db *ent.Client) error {
		f, err := db.MailboxFolder.Query().Where(mailboxfolder.MailboxID(w.box.ID), mailboxfolder.Name("INBOX")).Only(ctx)
		if err == nil && f.LastUID != n {
			t.Errorf("INBOX last uid %d, want %d", f.LastUID, n)
		}
		return err
	})
}

// TestSync_HostileMessages: malformed MIME, an unknown charset, a message without Message-ID
// and one with a NUL in its subject are stored with what could be read and the problems in
// error, and the sync goes on to the message after them. Catches a crash or a stuck sync (the
// next run would fail on the same message for ever), a lost message, a message without
// Message-ID stored again by the next sync.
func TestSync_HostileMessages(t *testing.T) {
	t.Parallel()
	w := newWorld(t, mailserver.Options{})
	broken := msg{From: "kunde@privat.test", To: w.addr, Subject: "Kaputt", ID: "broken@privat.test",
		Headers: []string{`Content-Type: multipart/mixed; boundary="nie-da"`},
		Body:    "kein Teil\nnur Text ohne Grenze\n--falsch\nContent-Type: text/plain\n\nrest"}
	charset := msg{From: "kunde@privat.test", To: w.addr, Subject: "Zeichensatz", ID: "charset@privat.test",
		Headers: []string{"Content-Type: text/plain; charset=x-klingon-42", "Content-Transfer-Encoding: 8bit"},
		Body:    "Gr\xfc\xdfe aus K\xf6ln"}
	noID := msg{From: "kunde@privat.test", To: w.addr, Subject: "Ohne Kennung", Body: "hallo"}
	nul := msg{From: "kunde@privat.test", To: w.addr, Subject: "Null\x00Byte", ID: "nul@privat.test", Body: "a\x00b"}
	after := w.customerMail("Danach", "after@privat.test")
	noIDRaw := noID.raw()
	w.deliver(t, broken.raw(), charset.raw(), noIDRaw, nul.raw(), after.raw())

	rep := w.sync(t)
	if rep.Stored != 5 {
		t.Fatalf("sync = %+v, want all 5 stored", rep)
	}
	if mb := w.mailbox(t); mb.SyncState != "active" {
		t.Errorf("mailbox %s (%s) after hostile messages", mb.SyncState, mb.SyncError)
	}
	if e := w.bySubject(t, "Kaputt"); e.Error == "" {
		t.Error("malformed MIME stored without an error")
	}
	cs := w.bySubject(t, "Zeichensatz")
	if cs.Error == "" || !strings.Contains(cs.Error, "klingon") {
		t.Errorf("unknown charset: error %q", cs.Error)
	}
	if !strings.Contains(cs.TextBody, "K") {
		t.Errorf("unknown charset: text %q", cs.TextBody)
	}
	ni := w.bySubject(t, "Ohne Kennung")
	if !strings.HasSuffix(ni.MessageID, "@synthesized.brokerdesk.invalid") || !strings.Contains(ni.Error, "Message-ID") {
		t.Errorf("no Message-ID: id %q error %q", ni.MessageID, ni.Error)
	}
	if e := w.bySubject(t, "NullByte"); strings.Contains(e.TextBody, "\x00") {
		t.Error("NUL stored")
	}
	w.bySubject(t, "Danach")

	// The same message without Message-ID once more (another folder, a re-sync): recognised.
	w.deliver(t, noIDRaw)
	if rep := w.sync(t); rep.Duplicates != 1 || rep.Stored != 0 {
		t.Errorf("message without Message-ID synced again = %+v, want a duplicate", rep)
	}
}
