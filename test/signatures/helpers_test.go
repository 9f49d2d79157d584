// Package signatures tests the /signature-requests API: creating a request from contact and
// standard documents (checked, merged, the links mailed over a real SMTP server and redacted
// from the stored copy), the 422s of every field, list filters, isolation and visibility,
// cancel, remind, expiry and idempotent replay. The signing page itself is test/signing's.
package signatures

import (
	"bytes"
	"context"
	"fmt"
	"mime/multipart"
	"net/textproto"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brokerdesk/brokerdesk/test/pdftest"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/operator"
	"github.com/brokerdesk/brokerdesk/app/platform/blobstore"
	"github.com/brokerdesk/brokerdesk/app/platform/mail"
	"github.com/brokerdesk/brokerdesk/app/platform/mailserver"
	"github.com/brokerdesk/brokerdesk/app/platform/pdf"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/signaturerequest"
	"github.com/brokerdesk/brokerdesk/test/apitest"
	"github.com/brokerdesk/brokerdesk/test/testsvc"
)

func TestMain(m *testing.M) { os.Exit(apitest.Main(m)) }

var (
	worldOnce sync.Once
	world     *apitest.Env
)

// setup returns the package's server, working jobs like a serve process (the mails of the
// links are delivered, the expiry jobs run).
func setup(t testing.TB) *apitest.Env {
	t.Helper()
	worldOnce.Do(func() {
		world = apitest.New(keep{t})
		if err := world.Server.StartJobs(context.Background()); err != nil {
			t.Fatalf("start jobs: %v", err)
		}
		apitest.BeforeDrop(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			defer cancel()
			_ = world.Server.StopJobs(ctx)
		})
	})
	if world == nil {
		t.Fatal("no test server")
	}
	return world
}

// keep is t without cleanups: the package's server outlives the test that builds it.
type keep struct{ testing.TB }

func (keep) Cleanup(func()) {}

var seq atomic.Int64

// fixture is a company licensing digital_signature (and emails, to read the sent copies) with
// a shared mailbox on a mail server of its own, and a contact with an e-mail address.
type fixture struct {
	co           *apitest.Company
	srv          *mailserver.Server
	mailbox      operator.Mailbox
	contact      string
	contactEmail string
}

func newFixture(t *testing.T, env *apitest.Env) *fixture {
	t.Helper()
	f := &fixture{co: env.NewCompany(t, "digital_signature", "emails"), srv: testsvc.MailServer(t, mailserver.Options{})}
	n := seq.Add(1)
	box := fmt.Sprintf("makler%d@broker.test", n)
	if err := f.srv.AddUser(box, "pw"); err != nil {
		t.Fatal(err)
	}
	mb, err := env.Ops.CreateMailbox(context.Background(), env.Config.DataKeys, operator.NewMailbox{CompanyID: f.co.ID,
		Email: box, Label: "Büro", IMAPURL: f.srv.IMAPURL(), SMTPURL: f.srv.SMTPURL(), Username: box, Password: "pw", Shared: true})
	if err != nil {
		t.Fatal(err)
	}
	f.mailbox = mb
	f.contactEmail = fmt.Sprintf("erika%d@kunde.test", n)
	f.contact = newContact(t, env, f.co.Secret, f.contactEmail, nil)
	return f
}

// newPersonalMailbox adds a personal mailbox of user to f's company, on f's mail server, and
// returns its id.
func newPersonalMailbox(t *testing.T, env *apitest.Env, f *fixture, user uuid.UUID) string {
	t.Helper()
	box := fmt.Sprintf("persoenlich%d@broker.test", seq.Add(1))
	if err := f.srv.AddUser(box, "pw"); err != nil {
		t.Fatal(err)
	}
	mb, err := env.Ops.CreateMailbox(context.Background(), env.Config.DataKeys, operator.NewMailbox{CompanyID: f.co.ID,
		Email: box, Label: "Persönlich", IMAPURL: f.srv.IMAPURL(), SMTPURL: f.srv.SMTPURL(), Username: box, Password: "pw", OwnerID: &user})
	if err != nil {
		t.Fatal(err)
	}
	return mb.ID.String()
}

// newContact creates a private contact through the API (email "" for none), owned by owner.
func newContact(t *testing.T, env *apitest.Env, key, email string, owner *uuid.UUID) string {
	t.Helper()
	body := map[string]any{"type": "private", "firstName": "Erika", "lastName": "Mustermann"}
	if email != "" {
		body["email"] = email
	}
	if owner != nil {
		body["ownerId"] = owner.String()
	}
	return apitest.Create[struct {
		ID string `json:"id"`
	}](t, env, key, "/contacts", body).ID
}

// upload files content as a document of contact (type policy) and returns its id.
func upload(t *testing.T, env *apitest.Env, key, contact, filename string, content []byte) string {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	_ = w.WriteField("type", "policy")
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name="file"; filename="`+filename+`"`)
	h.Set("Content-Type", "application/octet-stream")
	fw, _ := w.CreatePart(h)
	_, _ = fw.Write(content)
	_ = w.Close()
	r := env.Do(t, apitest.Request{Method: "POST", Path: "/contacts/" + contact + "/documents", Key: key, Body: buf.Bytes(),
		Header: map[string]string{"Content-Type": w.FormDataContentType()}})
	if r.Status != 201 {
		t.Fatalf("upload %s: %d %s", filename, r.Status, r.Body)
	}
	var d struct {
		ID string `json:"id"`
	}
	r.Decode(t, &d)
	return d.ID
}

// render is a PDF of our renderer with pages pages of text.
func render(t *testing.T, title string, pages int) []byte {
	t.Helper()
	var b strings.Builder
	for i := range pages {
		if i > 0 {
			b.WriteString("[[pagebreak]]\n")
		}
		fmt.Fprintf(&b, "# %s, Seite %d\nText.\n", title, i+1)
	}
	r, err := pdf.Render(b.String(), nil, pdf.Meta{Title: title, CreatedAt: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	if r.Pages != pages {
		t.Fatalf("rendered %d pages, want %d", r.Pages, pages)
	}
	return r.PDF
}

// pagesPDF is a hand-made PDF of n empty A4 pages; catalogExtra goes into the catalog, extra
// objects follow the pages.
func pagesPDF(n int, catalogExtra string, extra ...string) []byte {
	kids := make([]string, n)
	objs := []string{"", ""}
	for i := range n {
		kids[i] = fmt.Sprintf("%d 0 R", i+3)
		objs = append(objs, "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] >>")
	}
	objs[0] = "<< /Type /Catalog /Pages 2 0 R " + catalogExtra + " >>"
	objs[1] = fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), n)
	return pdftest.Hand(append(objs, extra...)...)
}

// request is a SignatureRequest as the API shows it.
type request struct {
	ID        string `json:"id"`
	ContactID string `json:"contactId"`
	Provider  string `json:"provider"`
	Status    string `json:"status"`
	Title     string `json:"title"`
	Message   string `json:"message"`
	Documents []struct {
		DocumentID         *string `json:"documentId"`
		StandardDocumentID *string `json:"standardDocumentId"`
		Filename           string  `json:"filename"`
		Pages              int     `json:"pages"`
	} `json:"documents"`
	Fields []struct {
		Signer int     `json:"signer"`
		Role   string  `json:"role"`
		Page   int     `json:"page"`
		X      float64 `json:"x"`
		Y      float64 `json:"y"`
		Width  float64 `json:"width"`
		Height float64 `json:"height"`
	} `json:"fields"`
	PageCount int `json:"pageCount"`
	Signers   []struct {
		ID         string  `json:"id"`
		Role       string  `json:"role"`
		Name       string  `json:"name"`
		Email      string  `json:"email"`
		UserID     *string `json:"userId"`
		Status     string  `json:"status"`
		NotifiedAt *string `json:"notifiedAt"`
		RemindedAt *string `json:"remindedAt"`
	} `json:"signers"`
	MailboxID   *string `json:"mailboxId"`
	ExpiresAt   string  `json:"expiresAt"`
	CancelledAt *string `json:"cancelledAt"`
	CreatorID   *string `json:"creatorId"`
}

func create(t *testing.T, env *apitest.Env, key string, body any) request {
	t.Helper()
	return apitest.Create[request](t, env, key, "/signature-requests", body)
}

func get(t *testing.T, env *apitest.Env, key, id string) request {
	t.Helper()
	return apitest.Get[request](t, env, key, "/signature-requests/"+id)
}

func list(t *testing.T, env *apitest.Env, key, query string) []request {
	t.Helper()
	r := env.Do(t, apitest.Request{Path: "/signature-requests?" + query, Key: key})
	if r.Status != 200 {
		t.Fatalf("list: %d %s", r.Status, r.Body)
	}
	var p apitest.Page[request]
	r.Decode(t, &p)
	return p.Data
}

func ids(rs []request) map[string]bool {
	out := map[string]bool{}
	for _, r := range rs {
		out[r.ID] = true
	}
	return out
}

// standardDocuments are the company's standard documents by file name.
func standardDocuments(t *testing.T, env *apitest.Env, key string) map[string]string {
	t.Helper()
	var body struct {
		Data []struct {
			ID       string `json:"id"`
			Filename string `json:"filename"`
		} `json:"data"`
	}
	r := env.Do(t, apitest.Request{Path: "/standard-documents", Key: key})
	if r.Status != 200 {
		t.Fatalf("standard documents: %d %s", r.Status, r.Body)
	}
	r.Decode(t, &body)
	out := map[string]string{}
	for _, d := range body.Data {
		out[d.Filename] = d.ID
	}
	return out
}

// received waits for n messages to arrive at srv and returns them parsed.
func received(t *testing.T, srv *mailserver.Server, n int) []*mail.Parsed {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	envs, err := srv.WaitReceived(ctx, n)
	if err != nil {
		t.Fatalf("waiting for %d mails: %v (got %d)", n, err, len(srv.Received()))
	}
	out := make([]*mail.Parsed, len(envs))
	for i, e := range envs {
		out[i] = mail.Parse(e.Data)
	}
	return out
}

// linkIn is the signing link in a mail's text.
func linkIn(t *testing.T, text string) string {
	t.Helper()
	i := strings.Index(text, "/sign/")
	if i < 0 {
		t.Fatalf("no signing link in %q", text)
	}
	start := strings.LastIndexAny(text[:i], " \n\t") + 1
	end := strings.IndexAny(text[i:], " \r\n")
	if end < 0 {
		end = len(text) - i
	}
	return text[start : i+end]
}

// row reads a request as stored (no lazy expiry: the test sees what the job did).
func row(t *testing.T, env *apitest.Env, company uuid.UUID, id string) *ent.SignatureRequest {
	t.Helper()
	var r *ent.SignatureRequest
	env.InCompany(t, company, func(ctx context.Context, db *ent.Client) error {
		var err error
		r, err = db.SignatureRequest.Query().Where(signaturerequest.ID(uuid.MustParse(id))).Only(ctx)
		return err
	})
	return r
}

// pdfPages is the page count pdfinfo (poppler) reads from the merged PDF of request id.
func pdfPages(t *testing.T, env *apitest.Env, company uuid.UUID, id string) int {
	t.Helper()
	ctx := context.Background()
	bucket, err := blobstore.Open(ctx, env.Config.BlobURL)
	if err != nil {
		t.Fatal(err)
	}
	defer bucket.Close()
	content, err := bucket.ReadAll(ctx, row(t, env, company, id).SourceBlobKey)
	if err != nil {
		t.Fatal(err)
	}
	out := pdftest.Must(t, "pdfinfo", content)
	for _, l := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(l, "Pages:"); ok {
			var n int
			fmt.Sscan(strings.TrimSpace(v), &n)
			return n
		}
	}
	t.Fatalf("pdfinfo printed no page count:\n%s", out)
	return 0
}
