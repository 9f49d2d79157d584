// Package emails tests the read side of the e-mail area (issue 21): GET /email-threads (list,
// detail), GET /emails/{id} with its body variants, attachment downloads, templates and the
// opt-out list, with the visibility matrix and company isolation. Sending and the IMAP sync
// are tested where they are built; here threads and messages are seeded as the app role.
package emails

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"gocloud.dev/blob"

	"github.com/brokerdesk/brokerdesk/app/operator"
	"github.com/brokerdesk/brokerdesk/app/platform/blobstore"
	"github.com/brokerdesk/brokerdesk/ent"
	entemail "github.com/brokerdesk/brokerdesk/ent/email"
	"github.com/brokerdesk/brokerdesk/ent/leadstage"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

func TestMain(m *testing.M) { os.Exit(apitest.Main(m)) }

var seq atomic.Int64

// newCompany is a company licensing e-mail and marketing.
func newCompany(t *testing.T, env *apitest.Env) *apitest.Company {
	return env.NewCompany(t, "emails", "marketing")
}

// mailbox creates a mailbox of co through the operator: shared, or owned by owner.
func mailbox(t *testing.T, env *apitest.Env, co *apitest.Company, owner *uuid.UUID) uuid.UUID {
	t.Helper()
	n := seq.Add(1)
	m, err := env.Ops.CreateMailbox(context.Background(), env.Config.DataKeys, operator.NewMailbox{CompanyID: co.ID,
		Email: fmt.Sprintf("box%d@makler.test", n), IMAPURL: "imap://127.0.0.1:1143", SMTPURL: "smtp://127.0.0.1:1025",
		Username: "box", Password: "geheim", OwnerID: owner, Shared: owner == nil})
	if err != nil {
		t.Fatalf("create mailbox: %v", err)
	}
	return m.ID
}

// contact creates a contact of co owned by owner (nil: nobody).
func contact(t *testing.T, env *apitest.Env, co uuid.UUID, owner *uuid.UUID) uuid.UUID {
	t.Helper()
	var id uuid.UUID
	env.InCompany(t, co, func(ctx context.Context, db *ent.Client) error {
		c, err := db.Contact.Create().SetType("private").SetFirstName("Kai").SetLastName("Kunde").SetNillableOwnerID(owner).Save(ctx)
		if err == nil {
			id = c.ID
		}
		return err
	})
	return id
}

// msg is a message to seed.
type msg struct {
	From, To, Subject, Text string
	HTML                    *string
	At                      time.Time
	Direction               string // default inbound
	Contacts, Leads         []uuid.UUID
	Files                   []file
}

type file struct {
	Name, Type string
	Content    []byte
}

type seeded struct {
	Thread      uuid.UUID
	Emails      []uuid.UUID
	Attachments [][]uuid.UUID
}

// thread seeds a thread of mailbox mb with msgs (as the sync stores them: search_text is
// subject, addresses and text in lower case), their links and attachments (content in the
// blob store).
func thread(t *testing.T, env *apitest.Env, co, mb uuid.UUID, msgs ...msg) seeded {
	t.Helper()
	ctx := context.Background()
	bucket, err := blobstore.Open(ctx, env.Config.BlobURL)
	if err != nil {
		t.Fatal(err)
	}
	defer bucket.Close()
	var out seeded
	env.InCompany(t, co, func(ctx context.Context, db *ent.Client) error {
		last := msgs[len(msgs)-1].At
		th, err := db.EmailThread.Create().SetMailboxID(mb).SetSubject(msgs[0].Subject).SetSubjectKey(strings.ToLower(msgs[0].Subject)).
			SetLastMessageAt(last).SetMessageCount(len(msgs)).Save(ctx)
		if err != nil {
			return err
		}
		out.Thread = th.ID
		for _, m := range msgs {
			dir, status := "inbound", "received"
			if m.Direction == "outbound" {
				dir, status = "outbound", "sent"
			}
			search := strings.ToLower(strings.Join([]string{m.Subject, m.From, m.To, m.Text}, "\n"))
			e, err := db.Email.Create().SetThreadID(th.ID).SetMailboxID(mb).SetDirection(entemail.Direction(dir)).SetStatus(entemail.Status(status)).
				SetMessageID(uuid.NewString() + "@example.com").SetFromAddress(m.From).SetFromName("Absender").
				SetTo([]schematype.MailAddress{{Email: m.To}}).SetBcc([]schematype.MailAddress{{Email: "bcc@example.com"}}).
				SetSubject(m.Subject).SetTextBody(m.Text).SetNillableHTMLBody(m.HTML).SetSearchText(search).SetSentAt(m.At).Save(ctx)
			if err != nil {
				return err
			}
			out.Emails = append(out.Emails, e.ID)
			var atts []uuid.UUID
			for _, f := range m.Files {
				key := "emails/" + co.String() + "/" + uuid.NewString()
				if err := bucket.WriteAll(ctx, key, f.Content, &blob.WriterOptions{ContentType: "application/octet-stream"}); err != nil {
					return err
				}
				sum := sha256.Sum256(f.Content)
				a, err := db.EmailAttachment.Create().SetEmailID(e.ID).SetThreadID(th.ID).SetFilename(f.Name).SetContentType(f.Type).
					SetSizeBytes(int64(len(f.Content))).SetSha256(hex.EncodeToString(sum[:])).SetBlobKey(key).Save(ctx)
				if err != nil {
					return err
				}
				atts = append(atts, a.ID)
			}
			out.Attachments = append(out.Attachments, atts)
			for _, c := range m.Contacts {
				if _, err := db.EmailLink.Create().SetEmailID(e.ID).SetThreadID(th.ID).SetContactID(c).Save(ctx); err != nil {
					return err
				}
			}
			for _, l := range m.Leads {
				if _, err := db.EmailLink.Create().SetEmailID(e.ID).SetThreadID(th.ID).SetLeadID(l).Save(ctx); err != nil {
					return err
				}
			}
		}
		return nil
	})
	return out
}

// link links message e of thread th to contact c afterwards (as a later sync would).
func link(t *testing.T, env *apitest.Env, co uuid.UUID, s seeded, c uuid.UUID) {
	t.Helper()
	env.InCompany(t, co, func(ctx context.Context, db *ent.Client) error {
		_, err := db.EmailLink.Create().SetEmailID(s.Emails[0]).SetThreadID(s.Thread).SetContactID(c).Save(ctx)
		return err
	})
}

// lead creates a lead of co owned by owner.
func lead(t *testing.T, env *apitest.Env, co uuid.UUID, owner *uuid.UUID) uuid.UUID {
	t.Helper()
	var id uuid.UUID
	env.InCompany(t, co, func(ctx context.Context, db *ent.Client) error {
		st, err := db.LeadStage.Query().Where(leadstage.Key("new")).Only(ctx)
		if err != nil {
			return err
		}
		l, err := db.Lead.Create().SetStageID(st.ID).SetFirstName("Lea").SetLastName("Lead").SetNillableOwnerID(owner).Save(ctx)
		if err == nil {
			id = l.ID
		}
		return err
	})
	return id
}

type threadView struct {
	ID            string    `json:"id"`
	MailboxID     string    `json:"mailboxId"`
	Subject       string    `json:"subject"`
	LastMessageAt time.Time `json:"lastMessageAt"`
	MessageCount  int       `json:"messageCount"`
	ContactIDs    []string  `json:"contactIds"`
	LeadIDs       []string  `json:"leadIds"`
	Messages      []email   `json:"messages"`
}

type email struct {
	ID         string   `json:"id"`
	ThreadID   string   `json:"threadId"`
	Subject    string   `json:"subject"`
	Text       *string  `json:"text"`
	HTML       *string  `json:"html"`
	Direction  string   `json:"direction"`
	ContactIDs []string `json:"contactIds"`
	Bcc        []struct {
		Email string `json:"email"`
	} `json:"bcc"`
	Attachments []struct {
		ID          string `json:"id"`
		Filename    string `json:"filename"`
		ContentType string `json:"contentType"`
	} `json:"attachments"`
}

// threads lists GET /email-threads?query with key and returns the ids in order.
func threads(t *testing.T, env *apitest.Env, key, query string) []string {
	t.Helper()
	r := env.Do(t, apitest.Request{Path: "/email-threads?" + query, Key: key})
	if r.Status != 200 {
		t.Fatalf("list threads ?%s: %d %s", query, r.Status, r.Body)
	}
	var p apitest.Page[threadView]
	r.Decode(t, &p)
	ids := []string{}
	for _, x := range p.Data {
		ids = append(ids, x.ID)
	}
	return ids
}
