package emailsend

import (
	"context"
	"crypto/tls"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/emails"
	"github.com/brokerdesk/brokerdesk/app/operator"
	"github.com/brokerdesk/brokerdesk/app/platform/mail"
	"github.com/brokerdesk/brokerdesk/app/platform/mailserver"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/document"
	"github.com/brokerdesk/brokerdesk/ent/email"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// TestSend_Delivered: the whole path against real servers. Catches a message that never leaves
// the queue, a Message-ID other than the one the API answered, a status that stays queued, a
// missing email.sent, a sent message missing from the Sent folder (the broker's own mail client
// would not show it), a send missing from the contact's timeline, and a wrong points charge.
func TestSend_Delivered(t *testing.T) {
	t.Parallel()
	env, srv := setup(t)
	s := newSender(t, env, nil, 10)
	contact := newContact(t, env, s.co.Secret, "erika@kunde.test")

	r := env.Do(t, apitest.Request{Method: "POST", Path: "/emails", Key: s.co.Secret,
		Body: s.body("erika@kunde.test", map[string]any{"contactId": contact,
			"cc": []map[string]any{{"email": "kollege@broker.test"}}, "bcc": []map[string]any{{"email": "Erika@kunde.test"}}})})
	if r.Status != 201 {
		t.Fatalf("send: %d %s", r.Status, r.Body)
	}
	var e emailView
	r.Decode(t, &e)
	if e.Status != "queued" || e.Direction != "outbound" || e.From.Email != s.address || e.From.Name != "Makler Büro" {
		t.Errorf("answer: status %s direction %s from %+v", e.Status, e.Direction, e.From)
	}
	if got := r.Header.Get("Location"); got != "/api/public/v1/emails/"+e.ID {
		t.Errorf("Location %q", got)
	}
	if len(e.ContactIDs) != 1 || e.ContactIDs[0] != contact {
		t.Errorf("contactIds %v, want [%s]", e.ContactIDs, contact)
	}
	if !strings.HasSuffix(e.MessageID, "@broker.test") {
		t.Errorf("Message-ID %q is not in the mailbox's domain", e.MessageID)
	}
	// Two distinct recipients (the bcc repeats the to address in other case): two points.
	if b := s.balance(t, env); b != 8 {
		t.Errorf("balance %d, want 8", b)
	}

	env2 := received(t, srv, e.MessageID)
	if env2.From != s.address || len(env2.To) != 2 {
		t.Errorf("envelope from %q to %v", env2.From, env2.To)
	}
	p := mail.Parse(env2.Data)
	if p.Subject != "Ihr Angebot" || !strings.Contains(p.Text, "anbei Ihr Angebot") {
		t.Errorf("message subject %q text %q", p.Subject, p.Text)
	}
	if strings.Contains(string(env2.Data), "Bcc:") {
		t.Error("the message carries a Bcc header")
	}

	row := waitStatus(t, env, s.co.ID, e.ID, "sent")
	if row.SentAt == nil {
		t.Error("sentAt not set")
	}
	sent := eventsAbout(t, env, s.co.Secret, "email.sent", e.ID)
	if len(sent) != 1 || sent[0].Status != "sent" || sent[0].Text != nil {
		t.Errorf("email.sent events %+v, want one, status sent, without body", sent)
	}

	// The Sent folder over IMAP holds the message (appended after the send).
	deadline := time.Now().Add(10 * time.Second)
	for !inSentFolder(t, s, e.MessageID) {
		if time.Now().After(deadline) {
			t.Fatal("the message is not in the mailbox's Sent folder")
		}
		time.Sleep(100 * time.Millisecond)
	}

	var acts apitest.Page[struct {
		Type    string `json:"type"`
		Content string `json:"content"`
	}]
	ar := env.Do(t, apitest.Request{Path: "/contacts/" + contact + "/activities", Key: s.co.Secret})
	ar.Decode(t, &acts)
	found := false
	for _, a := range acts.Data {
		found = found || a.Type == "email" && a.Content == "Ihr Angebot"
	}
	if !found {
		t.Errorf("the contact's timeline has no e-mail entry: %s", ar.Body)
	}
}

func inSentFolder(t *testing.T, s *sender, messageID string) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := mail.DialIMAP(ctx, mail.Config{TLS: &tls.Config{RootCAs: s.srv.RootCAs()}, Timeout: 5 * time.Second},
		mail.Server{URL: s.srv.IMAPURL(), Username: s.address, Password: s.password})
	if err != nil {
		t.Fatalf("IMAP: %v", err)
	}
	defer c.Close()
	folder, err := c.SentFolder()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Select(folder); err != nil {
		return false
	}
	msgs, err := c.FetchAfter(0, 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		if mail.Parse(m.Raw).MessageID == messageID {
			return true
		}
	}
	return false
}

// TestSend_Idempotent: a replay with the same Idempotency-Key answers the stored 201 and sends
// nothing more. Catches a retried POST that sends (and charges) twice.
func TestSend_Idempotent(t *testing.T) {
	t.Parallel()
	env, _ := setup(t)
	s := newSender(t, env, nil, 5)
	key := map[string]string{"Idempotency-Key": uuid.NewString()}
	body := s.body("kunde@kunde.test", nil)
	first := env.Do(t, apitest.Request{Method: "POST", Path: "/emails", Key: s.co.Secret, Body: body, Header: key})
	second := env.Do(t, apitest.Request{Method: "POST", Path: "/emails", Key: s.co.Secret, Body: body, Header: key})
	if first.Status != 201 || second.Status != 201 {
		t.Fatalf("statuses %d, %d", first.Status, second.Status)
	}
	var a, b emailView
	first.Decode(t, &a)
	second.Decode(t, &b)
	if a.ID != b.ID || second.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("replay: ids %s, %s; Idempotent-Replayed %q", a.ID, b.ID, second.Header.Get("Idempotent-Replayed"))
	}
	if bal := s.balance(t, env); bal != 4 {
		t.Errorf("balance %d, want 4 (one send)", bal)
	}
	env.InCompany(t, s.co.ID, func(ctx context.Context, db *ent.Client) error {
		n, err := db.Email.Query().Count(ctx)
		if err == nil && n != 1 {
			t.Errorf("%d e-mails stored, want 1", n)
		}
		return err
	})
}

// TestSend_Invalid: every bad field is a 422 naming it, nothing is stored or charged. Catches
// header injection through subject, names and addresses reaching the message, a mailbox,
// contact, template or document of another company (or none) being used, attachments past the
// limits, and marketing mail to several people or to an opted-out address.
func TestSend_Invalid(t *testing.T) {
	t.Parallel()
	env, _ := setup(t)
	s := newSender(t, env, nil, 100)
	other := newSender(t, env, nil, 100)
	contact := newContact(t, env, s.co.Secret, "kunde@kunde.test")
	otherContact := newContact(t, env, other.co.Secret, "kunde@kunde.test")
	otherDoc := apitest.UploadPDF(t, env, other.co.Secret, otherContact, "fremd.pdf")
	// Three documents of 9 MB each (rows only: the size is checked before any content is read).
	var big []string
	env.InCompany(t, s.co.ID, func(ctx context.Context, db *ent.Client) error {
		for i := 0; i < 3; i++ {
			d, err := db.Document.Create().SetContactID(uuid.MustParse(contact)).SetType(document.TypePolicy).
				SetFilename(fmt.Sprintf("gross%d.pdf", i)).SetContentType("application/pdf").SetSize(9_000_000).
				SetSha256(strings.Repeat("0", 64)).SetBlobKey("documents/none/" + uuid.NewString()).Save(ctx)
			if err != nil {
				return err
			}
			big = append(big, d.ID.String())
		}
		return nil
	})
	if r := env.Do(t, apitest.Request{Method: "POST", Path: "/email-opt-outs", Key: s.co.Secret,
		Body: map[string]any{"email": "nein@kunde.test"}}); r.Status != 201 {
		t.Fatalf("opt-out: %d %s", r.Status, r.Body)
	}
	many := make([]map[string]any, 51)
	for i := range many {
		many[i] = map[string]any{"email": fmt.Sprintf("k%d@kunde.test", i)}
	}
	elevenDocs := make([]string, 11)
	for i := range elevenDocs {
		elevenDocs[i] = uuid.NewString()
	}
	two := []map[string]any{{"email": "a@kunde.test"}, {"email": "b@kunde.test"}}
	cases := []struct {
		name string
		body any
		want []string
	}{
		{"nothing given", map[string]any{}, []string{"mailboxId:required", "to:required", "subject:required", "text:required"}},
		{"line break in the subject", s.body("a@kunde.test", map[string]any{"subject": "Hallo\r\nBcc: opfer@evil.test"}),
			[]string{"subject:header_injection"}},
		{"line break in a name", s.body("a@kunde.test", map[string]any{"to": []map[string]any{{"email": "a@kunde.test", "name": "Eve\nBcc: opfer@evil.test"}}}),
			[]string{"to.0.name:header_injection"}},
		{"line break in an address", s.body("a@kunde.test", map[string]any{"cc": []map[string]any{{"email": "a@kunde.test\r\nBcc: opfer@evil.test"}}}),
			[]string{"cc.0.email:header_injection"}},
		{"NUL in the subject", s.body("a@kunde.test", map[string]any{"subject": "Hallo\x00"}), []string{"subject:header_injection"}},
		{"not an address", s.body("kein-at", nil), []string{"to.0.email:invalid_email"}},
		{"too many recipients", s.body("a@kunde.test", map[string]any{"to": many}), []string{"to:too_many"}},
		{"subject too long", s.body("a@kunde.test", map[string]any{"subject": strings.Repeat("x", 999)}), []string{"subject:too_long"}},
		{"no body", s.body("a@kunde.test", map[string]any{"text": nil}), []string{"text:required"}},
		{"malformed ids", s.body("a@kunde.test", map[string]any{"mailboxId": "x", "contactId": "y", "attachmentDocumentIds": []string{"z"}}),
			[]string{"mailboxId:invalid_uuid", "contactId:invalid_uuid", "attachmentDocumentIds.0:invalid_uuid"}},
		{"unknown mailbox", s.body("a@kunde.test", map[string]any{"mailboxId": uuid.NewString()}), []string{"mailboxId:unknown_mailbox"}},
		{"another company's mailbox", s.body("a@kunde.test", map[string]any{"mailboxId": other.mailbox.ID}), []string{"mailboxId:unknown_mailbox"}},
		{"unknown contact, lead, template and replied message", s.body("a@kunde.test", map[string]any{
			"contactId": otherContact, "leadId": uuid.NewString(), "templateId": uuid.NewString(), "replyToEmailId": uuid.NewString()}),
			[]string{"contactId:unknown_contact", "leadId:unknown_lead", "templateId:unknown_template", "replyToEmailId:unknown_email"}},
		{"another company's document", s.body("a@kunde.test", map[string]any{"attachmentDocumentIds": []string{otherDoc}}),
			[]string{"attachmentDocumentIds.0:unknown_document"}},
		{"too many documents", s.body("a@kunde.test", map[string]any{"attachmentDocumentIds": elevenDocs}),
			[]string{"attachmentDocumentIds:too_many"}},
		{"documents over 25 MB", s.body("a@kunde.test", map[string]any{"attachmentDocumentIds": big}),
			[]string{"attachmentDocumentIds:attachments_too_large"}},
		{"marketing to two people", s.body("a@kunde.test", map[string]any{"to": two, "marketing": true}),
			[]string{"to:marketing_single_recipient"}},
		{"marketing with a copy", s.body("a@kunde.test", map[string]any{"cc": two[:1], "marketing": true}),
			[]string{"to:marketing_single_recipient"}},
		{"marketing to an opted-out address", s.body("Nein@Kunde.test", map[string]any{"marketing": true}),
			[]string{"to.0.email:opted_out"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := env.Do(t, apitest.Request{Method: "POST", Path: "/emails", Key: s.co.Secret, Body: c.body})
			if r.Status != 422 {
				t.Fatalf("status %d, want 422: %s", r.Status, r.Body)
			}
			apitest.FieldErrors(c.want...)(t, r)
		})
	}
	if b := s.balance(t, env); b != 100 {
		t.Errorf("balance %d after refused sends, want 100", b)
	}
	env.InCompany(t, s.co.ID, func(ctx context.Context, db *ent.Client) error {
		n, err := db.Email.Query().Count(ctx)
		if err == nil && n != 0 {
			t.Errorf("%d e-mails stored by refused sends", n)
		}
		return err
	})
}

// TestSend_Points: without enough points the answer is 402 and nothing is stored; one point per
// distinct recipient. Catches sending on credit and charging per message instead of per
// recipient.
func TestSend_Points(t *testing.T) {
	t.Parallel()
	env, _ := setup(t)
	none := newSender(t, env, nil, 0)
	env.Run(t, []apitest.Case{
		{Name: "no points row at all", Key: none.co.Secret, Method: "POST", Path: "/emails",
			Body: none.body("a@kunde.test", nil), Status: 402, Problem: "insufficient_points"},
	})
	one := newSender(t, env, nil, 1)
	env.Run(t, []apitest.Case{
		{Name: "two recipients, one point", Key: one.co.Secret, Method: "POST", Path: "/emails",
			Body:   one.body("a@kunde.test", map[string]any{"cc": []map[string]any{{"email": "b@kunde.test"}}}),
			Status: 402, Problem: "insufficient_points"},
		{Name: "one recipient, one point", Key: one.co.Secret, Method: "POST", Path: "/emails",
			Body: one.body("a@kunde.test", nil), Status: 201},
		{Name: "then none left", Key: one.co.Secret, Method: "POST", Path: "/emails",
			Body: one.body("a@kunde.test", nil), Status: 402, Problem: "insufficient_points"},
	})
	if b := one.balance(t, env); b != 0 {
		t.Errorf("balance %d, want 0", b)
	}
	env.InCompany(t, none.co.ID, func(ctx context.Context, db *ent.Client) error {
		n, err := db.Email.Query().Count(ctx)
		if err == nil && n != 0 {
			t.Errorf("%d e-mails stored without points", n)
		}
		return err
	})
}

// TestSend_ConcurrentPoints: ten sends at once against five points: exactly five are accepted
// and the balance ends at zero. Catches a read-then-write charge (lost updates would accept
// more sends than points; the CHECK would turn the rest into 500s).
func TestSend_ConcurrentPoints(t *testing.T) {
	t.Parallel()
	env, _ := setup(t)
	s := newSender(t, env, nil, 5)
	var wg sync.WaitGroup
	statuses := make([]int, 10)
	for i := range statuses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := env.Do(t, apitest.Request{Method: "POST", Path: "/emails", Key: s.co.Secret,
				Body: s.body(fmt.Sprintf("k%d@kunde.test", i), nil)})
			statuses[i] = r.Status
		}()
	}
	wg.Wait()
	count := map[int]int{}
	for _, st := range statuses {
		count[st]++
	}
	if count[201] != 5 || count[402] != 5 {
		t.Errorf("statuses %v, want five 201 and five 402", count)
	}
	if b := s.balance(t, env); b != 0 {
		t.Errorf("balance %d, want 0", b)
	}
}

// TestSend_Access: the scope, the features and the caller's mailboxes. Catches a send without
// emails:write, from a company without the emails feature, marketing mail without the
// marketing feature, and an agent sending from a colleague's personal mailbox.
func TestSend_Access(t *testing.T) {
	t.Parallel()
	env, srv := setup(t)
	s := newSender(t, env, nil, 10)
	noFeature := newSender(t, env, nil, 10, "leads")
	noMarketing := newSender(t, env, nil, 10, "emails")
	agent := env.NewUser(t, s.co, "agent")
	colleague := env.NewUser(t, s.co, "agent")
	personal, err := env.Ops.CreateMailbox(context.Background(), env.Config.DataKeys, operatorMailbox(s, srv, colleague.ID))
	if err != nil {
		t.Fatal(err)
	}
	env.Run(t, []apitest.Case{
		{Name: "no credential", Method: "POST", Path: "/emails", Body: s.body("a@kunde.test", nil), Status: 401},
		{Name: "read scope only", Key: s.co.KeyWithScopes(t, "emails:read"), Method: "POST", Path: "/emails",
			Body: s.body("a@kunde.test", nil), Status: 403, Problem: "insufficient_scope"},
		{Name: "feature emails missing", Key: noFeature.co.Secret, Method: "POST", Path: "/emails",
			Body: noFeature.body("a@kunde.test", nil), Status: 403, Problem: "feature_not_licensed"},
		{Name: "marketing without the feature", Key: noMarketing.co.Secret, Method: "POST", Path: "/emails",
			Body: noMarketing.body("a@kunde.test", map[string]any{"marketing": true}), Status: 403, Problem: "feature_not_licensed"},
		{Name: "an agent and a colleague's personal mailbox", Key: s.co.UserKey(t, agent), Method: "POST", Path: "/emails",
			Body: s.body("a@kunde.test", map[string]any{"mailboxId": personal.ID}), Status: 422,
			Check: apitest.FieldErrors("mailboxId:unknown_mailbox")},
		{Name: "the colleague and their own mailbox", Key: s.co.UserKey(t, colleague), Method: "POST", Path: "/emails",
			Body: s.body("a@kunde.test", map[string]any{"mailboxId": personal.ID}), Status: 201},
		{Name: "an agent and the shared mailbox", Key: s.co.UserKey(t, agent), Method: "POST", Path: "/emails",
			Body: s.body("a@kunde.test", nil), Status: 201},
	})
}

// TestSend_Reply: a reply names the message it answers: same thread, In-Reply-To and
// References. Catches replies starting new threads (the customer's client would not thread
// them either).
func TestSend_Reply(t *testing.T) {
	t.Parallel()
	env, srv := setup(t)
	s := newSender(t, env, nil, 10)
	first := s.send(t, env, s.body("kunde@kunde.test", nil))
	reply := s.send(t, env, s.body("kunde@kunde.test", map[string]any{"subject": "Re: Ihr Angebot", "replyToEmailId": first.ID}))
	if reply.ThreadID != first.ThreadID || reply.InReplyTo == nil || *reply.InReplyTo != first.MessageID {
		t.Errorf("reply: thread %s (first %s), inReplyTo %v", reply.ThreadID, first.ThreadID, reply.InReplyTo)
	}
	p := mail.Parse(received(t, srv, reply.MessageID).Data)
	if p.InReplyTo != first.MessageID || len(p.References) != 1 || p.References[0] != first.MessageID {
		t.Errorf("headers In-Reply-To %q References %v", p.InReplyTo, p.References)
	}
	env.InCompany(t, s.co.ID, func(ctx context.Context, db *ent.Client) error {
		th, err := db.EmailThread.Get(ctx, uuid.MustParse(first.ThreadID))
		if err == nil && th.MessageCount != 2 {
			t.Errorf("thread message count %d, want 2", th.MessageCount)
		}
		return err
	})
}

// TestSend_Template: a template fills subject and body from the contact, the company and the
// caller's placeholders, and a placeholder's value is never expanded again. Catches unfilled
// placeholders, values leaking other data through nested placeholders, and a marketing
// template sending without the unsubscribe header.
func TestSend_Template(t *testing.T) {
	t.Parallel()
	env, srv := setup(t)
	s := newSender(t, env, nil, 10)
	contact := newContact(t, env, s.co.Secret, "erika@kunde.test")
	tpl := newTemplate(t, env, s.co.ID, "Gruß", "Hallo {{contact.firstName}}", "Guten Tag {{contact.firstName}} {{contact.lastName}}, {{extra}} – {{company.name}}", true)
	e := s.send(t, env, map[string]any{"mailboxId": s.mailbox.ID, "to": []map[string]any{{"email": "erika@kunde.test"}},
		"templateId": tpl, "contactId": contact, "placeholders": map[string]string{"extra": "{{contact.email}}"}})
	// Marketing by the template's flag; tracking follows it but needs HTML, which this has none of.
	if e.Subject != "Hallo Erika" || !e.Marketing || e.Tracking {
		t.Errorf("subject %q marketing %v tracking %v (a marketing template's defaults, no HTML)", e.Subject, e.Marketing, e.Tracking)
	}
	env2 := received(t, srv, e.MessageID)
	p := mail.Parse(env2.Data)
	if !strings.Contains(p.Text, "Guten Tag Erika Muster, {{contact.email}} – Makler") {
		t.Errorf("text %q", p.Text)
	}
	if !strings.Contains(string(env2.Data), "List-Unsubscribe-Post: List-Unsubscribe=One-Click") {
		t.Error("marketing mail without List-Unsubscribe-Post")
	}
}

// operatorMailbox is a personal mailbox of owner in s's company on srv.
func operatorMailbox(s *sender, srv *mailserver.Server, owner uuid.UUID) operator.NewMailbox {
	addr := fmt.Sprintf("persoenlich%d@broker.test", seq.Add(1))
	_ = srv.AddUser(addr, "pw")
	return operator.NewMailbox{CompanyID: s.co.ID, Email: addr, IMAPURL: srv.IMAPURL(), SMTPURL: srv.SMTPURL(),
		Username: addr, Password: "pw", OwnerID: &owner}
}

// newTemplate stores a template of company through the operator and returns its id.
func newTemplate(t *testing.T, env *apitest.Env, company uuid.UUID, name, subject, text string, marketing bool) string {
	t.Helper()
	v, err := env.Ops.CreateTemplate(context.Background(), company, emails.NewTemplate{Name: name, Subject: subject,
		Text: text, Marketing: marketing})
	if err != nil {
		t.Fatalf("template: %v", err)
	}
	return v.ID.String()
}

// statusOf reads an e-mail's status below the API.
func statusOf(t *testing.T, env *apitest.Env, company uuid.UUID, id string) email.Status {
	t.Helper()
	var st email.Status
	env.InCompany(t, company, func(ctx context.Context, db *ent.Client) error {
		e, err := db.Email.Get(ctx, uuid.MustParse(id))
		if err == nil {
			st = e.Status
		}
		return err
	})
	return st
}
