package privacy

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/brokerdesk/brokerdesk/app/operator"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
	"github.com/brokerdesk/brokerdesk/migrations"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// requestErasure posts an erasure and wants 202.
func requestErasure(t testing.TB, env *apitest.Env, key, contact string) request {
	t.Helper()
	r := env.Do(t, apitest.Request{Method: "POST", Path: "/contacts/" + contact + "/privacy/erasure", Key: key,
		Body: map[string]any{"reason": "Antrag nach Art. 17 DSGVO per Brief", "requestedAt": "2026-12-01T09:00:00+01:00"}})
	if r.Status != 202 {
		t.Fatalf("erasure: %d %s", r.Status, r.Body)
	}
	var out request
	r.Decode(t, &out)
	return out
}

// uploadDoc uploads content as a document of type typ.
func uploadDoc(t testing.TB, env *apitest.Env, key, contact, typ, name string, content []byte) string {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	_ = w.WriteField("type", typ)
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name="file"; filename="`+name+`"`)
	h.Set("Content-Type", "application/pdf")
	fw, _ := w.CreatePart(h)
	_, _ = fw.Write(content)
	_ = w.Close()
	r := env.Do(t, apitest.Request{Method: "POST", Path: "/contacts/" + contact + "/documents", Key: key, Body: buf.Bytes(),
		Header: map[string]string{"Content-Type": w.FormDataContentType()}})
	if r.Status != 201 {
		t.Fatalf("upload: %d %s", r.Status, r.Body)
	}
	var d idOnly
	r.Decode(t, &d)
	return d.ID
}

// TestErasure_Errors: the documented refusals of POST /contacts/{id}/privacy/erasure, each
// before anything is recorded. Each case names what it would catch.
func TestErasure_Errors(t *testing.T) {
	t.Parallel()
	env := setup(t)
	co := env.NewCompany(t)
	other := env.NewCompany(t)
	ct := createContact(t, env, co.Secret, newPerson(), "")
	foreign := createContact(t, env, other.Secret, newPerson(), "")
	agent := env.NewUser(t, co, "agent")
	path := "/contacts/" + ct + "/privacy/erasure"
	ok := map[string]any{"reason": "Art. 17"}
	env.Run(t, []apitest.Case{
		// a request without the reason the spec requires
		{Name: "no reason", Key: co.Secret, Method: "POST", Path: path, Body: map[string]any{}, Status: 422,
			Check: apitest.FieldErrors("reason:required")},
		{Name: "blank reason", Key: co.Secret, Method: "POST", Path: path, Body: map[string]any{"reason": "  "}, Status: 422,
			Check: apitest.FieldErrors("reason:required")},
		// the 1000-character bound not checked (the column refuses it: 500)
		{Name: "reason too long", Key: co.Secret, Method: "POST", Path: path, Body: map[string]any{"reason": strings.Repeat("ä", 1001)},
			Status: 422},
		// requestedAt parsed loosely or not at all
		{Name: "bad requestedAt", Key: co.Secret, Method: "POST", Path: path, Body: map[string]any{"reason": "x", "requestedAt": "gestern"},
			Status: 422},
		{Name: "future requestedAt", Key: co.Secret, Method: "POST", Path: path,
			Body: map[string]any{"reason": "x", "requestedAt": time.Now().Add(48 * time.Hour).UTC().Format(time.RFC3339)}, Status: 422,
			Check: apitest.FieldErrors("requestedAt:in_future")},
		{Name: "unknown member", Key: co.Secret, Method: "POST", Path: path, Body: map[string]any{"reason": "x", "force": true}, Status: 422},
		{Name: "not JSON", Key: co.Secret, Method: "POST", Path: path, Body: "{", Status: 400},
		// an erasure of a contact that does not exist, or of another company's
		{Name: "unknown contact", Key: co.Secret, Method: "POST", Path: "/contacts/" + uuid.NewString() + "/privacy/erasure", Body: ok, Status: 404},
		{Name: "other company's contact", Key: co.Secret, Method: "POST", Path: "/contacts/" + foreign + "/privacy/erasure", Body: ok, Status: 404},
		// an agent erasing (policy: managers and admins)
		{Name: "agent", Key: co.UserKey(t, agent), Method: "POST", Path: path, Body: ok, Status: 403},
	})
	// Nothing was recorded by the refusals, and the contact is still there.
	if got := apitest.Get[apitest.Page[request]](t, env, co.Secret, "/privacy-requests?contactId="+ct).Data; len(got) != 0 {
		t.Errorf("refused requests were recorded: %+v", got)
	}
	if r := env.Do(t, apitest.Request{Path: "/contacts/" + ct, Key: co.Secret}); r.Status != 200 {
		t.Errorf("contact after refusals: %d", r.Status)
	}
}

// TestErasure_NothingLeft is the acceptance test of issue 25: after an erasure, a dump of every
// table of the company (every public table with company_id, read as the superuser, the river
// jobs' args too) and of every blob of the company holds the contact's name, e-mail, phone and
// IBAN nowhere outside retained_records and the retained prefix, which do hold them (the
// positive control: the dump would see them); and nothing retained is reachable through the
// API for an admin or the agent who owned the contact. Catches: a table the erasure forgot
// (events' payloads, stored idempotent answers, import rows, tasks, leads, e-mails, the partner's
// relationship entries), a blob left (documents, an earlier export's ZIP), a retained record
// that the API still serves.
func TestErasure_NothingLeft(t *testing.T) {
	t.Parallel()
	env := setup(t)
	ctx := context.Background()
	co := env.NewCompany(t)
	agent := env.NewUser(t, co, "agent")
	agentKey := co.UserKey(t, agent)
	p := newPerson()
	// A webhook receiver that echoes what it gets: the delivery log stores its answers.
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		_, _ = w.Write(b)
	}))
	defer echo.Close()
	apitest.Create[idOnly](t, env, co.Secret, "/webhook-endpoints", map[string]any{"url": echo.URL + "/hook", "events": []string{"*"}})
	// The contact, created with an Idempotency-Key: its stored answer carries the data (and the
	// IBAN: the company key may read the sealed groups).
	create := apitest.Request{Method: "POST", Path: "/contacts", Key: co.Secret,
		Header: map[string]string{"Idempotency-Key": "erase-" + uuid.NewString()},
		Body: map[string]any{"type": "private", "firstName": p.First, "lastName": p.Last, "email": p.Email,
			"ownerId": agent.ID.String(), "phones": []map[string]any{{"number": p.Phone}},
			"bank": map[string]any{"iban": p.IBAN, "bic": "COBADEFFXXX"}}}
	r := env.Do(t, create)
	if r.Status != 201 {
		t.Fatalf("contact: %d %s", r.Status, r.Body)
	}
	var ctv idOnly
	r.Decode(t, &ctv)
	ct := ctv.ID
	partner := createContact(t, env, co.Secret, newPerson(), "")
	env.Do(t, apitest.Request{Method: "POST", Path: "/contacts/" + ct + "/relationships", Key: co.Secret,
		Body: map[string]any{"relatedContactId": partner, "role": "partner"}})
	if r := env.Do(t, apitest.Request{Method: "POST", Path: "/contacts/" + ct + "/notes", Key: co.Secret,
		Body: map[string]any{"content": "Telefonat mit " + p.First + " " + p.Last}}); r.Status != 201 {
		t.Fatalf("note: %d %s", r.Status, r.Body)
	}
	ins := apitest.Get[apitest.Page[idOnly]](t, env, co.Secret, "/insurers?vuNumber=5501")
	if len(ins.Data) == 0 {
		t.Fatal("no insurer 5501")
	}
	contract := apitest.Create[idOnly](t, env, co.Secret, "/contracts", map[string]any{"contactId": ct, "insurerId": ins.Data[0].ID,
		"policyNumber": "ER-" + uuid.NewString()[:8], "type": "020", "status": "active"}).ID
	named := []byte("%PDF-1.4\n% Versicherungsnehmer: " + p.First + " " + p.Last + "\n%%EOF\n")
	policyDoc := uploadDoc(t, env, co.Secret, ct, "policy", "police.pdf", named) // retained: a business letter
	otherDoc := uploadDoc(t, env, co.Secret, ct, "other", "notiz.pdf", named)    // deleted: no duty to keep
	task := apitest.Create[idOnly](t, env, co.Secret, "/tasks", map[string]any{"title": "Rückruf " + p.Last, "contactId": ct}).ID
	// An e-mail from the person, linked to the contact, with its raw message and an attachment
	// in the bucket (written as the sync writes them), and the person's advertising objection.
	mails := seedMail(t, env, co, ct, p)
	mails = append(mails, seedImport(t, env, co, ct, p))
	// A lead from the website form with the person's address (never converted: found by e-mail).
	var lb bytes.Buffer
	lw := multipart.NewWriter(&lb)
	for k, v := range map[string]string{"firstName": p.First, "lastName": p.Last, "email": p.Email} {
		_ = lw.WriteField(k, v)
	}
	_ = lw.Close()
	if r := env.Do(t, apitest.Request{Method: "POST", Path: "/leads/intake", Body: lb.Bytes(),
		Header: map[string]string{"Content-Type": lw.FormDataContentType(), "X-API-Key": co.Publishable}}); r.Status/100 != 2 {
		t.Fatalf("intake: %d %s", r.Status, r.Body)
	}
	// The receiver has answered with the person's data before the erasure runs.
	deadline := time.Now().Add(30 * time.Second)
	for {
		var n int
		if err := env.OwnerDB.QueryRowContext(ctx, `SELECT count(*) FROM webhook_deliveries WHERE company_id = $1
			AND response_body LIKE '%' || $2 || '%'`, co.ID, p.Last).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no webhook delivery with the person's data after 30 s")
		}
		time.Sleep(100 * time.Millisecond)
	}
	// An earlier export: its ZIP must go with the rest.
	exp := requestExport(t, env, co.Secret, ct)
	await(t, env, co.Secret, exp)

	er := requestErasure(t, env, co.Secret, ct)
	if er.Type != "erasure" || er.Status != "queued" || er.DownloadURL != nil {
		t.Fatalf("created: %+v", er)
	}
	done := await(t, env, co.Secret, er)
	if done.Status != "completed" {
		t.Fatalf("erasure ended %s: %v", done.Status, done.Error)
	}
	if done.Summary["deleted.contact"] != 1 || done.Summary["retained.contract"] != 1 || done.Summary["retained.document"] != 1 ||
		done.Summary["retained.contact"] != 1 || done.Summary["deleted.tasks"] != 1 || done.Summary["deleted.leads"] != 1 ||
		done.Summary["erased.events"] == 0 || done.Summary["erased.idempotentAnswers"] != 1 ||
		done.Summary["deleted.emails"] != 1 || done.Summary["retained.email"] != 1 || done.Summary["retained.email_opt_out"] != 1 ||
		done.Summary["blanked.importRows"] != 1 || done.Summary["deleted.importFiles"] != 1 {
		t.Errorf("summary %v", done.Summary)
	}

	needles := map[string]string{"first name": p.First, "last name": p.Last, "e-mail": strings.ToLower(p.Email),
		"phone": strings.TrimLeft(strings.ReplaceAll(p.Phone, " ", ""), "0"), "IBAN": p.IBAN}
	find := func(text string) []string {
		var hit []string
		low := strings.ToLower(text)
		for what, n := range needles {
			// bytea columns (stored idempotent answers) dump as hex
			if strings.Contains(low, strings.ToLower(n)) || strings.Contains(low, hex.EncodeToString([]byte(n))) {
				hit = append(hit, what)
			}
		}
		return hit
	}

	t.Run("database", func(t *testing.T) {
		tables := env.TenantTables(t)
		retainedSeen := false
		for _, table := range tables {
			q := "SELECT row_to_json(t)::text FROM " + pgx.Identifier{"public", table.Name}.Sanitize() + " t WHERE " +
				pgx.Identifier{table.Column}.Sanitize() + " = $1"
			rows, err := env.OwnerDB.QueryContext(ctx, q, co.ID)
			if err != nil {
				t.Fatalf("dump %s: %v", table.Name, err)
			}
			for rows.Next() {
				var s string
				if err := rows.Scan(&s); err != nil {
					t.Fatal(err)
				}
				hit := find(s)
				if table.Name == "retained_records" {
					retainedSeen = retainedSeen || len(hit) > 0
					continue
				}
				if len(hit) > 0 {
					t.Errorf("%s holds the %v: %.400s", table.Name, hit, s)
				}
			}
			_ = rows.Close()
		}
		if !retainedSeen {
			t.Error("retained_records holds none of the data: the dump proves nothing (or nothing was retained)")
		}
		rows, err := env.OwnerDB.QueryContext(ctx, "SELECT args::text FROM "+pgx.Identifier{migrations.RiverSchema, "river_job"}.Sanitize())
		if err != nil {
			t.Fatalf("dump river_job: %v", err)
		}
		defer rows.Close()
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				t.Fatal(err)
			}
			if hit := find(s); len(hit) > 0 {
				t.Errorf("a river job's args hold the %v: %s", hit, s)
			}
		}
	})

	t.Run("blobs", func(t *testing.T) {
		dir := filepath.Join(os.TempDir(), fmt.Sprintf("brokerdesk-blobs-%d", os.Getpid()))
		retainedSeen := false
		err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.Contains(path, co.ID.String()) {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(dir, path)
			if strings.HasPrefix(rel, "retained"+string(filepath.Separator)) {
				retainedSeen = retainedSeen || len(find(string(b))) > 0
				return nil
			}
			if strings.HasPrefix(rel, "privacy"+string(filepath.Separator)) && !strings.HasSuffix(rel, ".attrs") {
				t.Errorf("an export's ZIP is left: %s", rel)
			}
			if hit := find(string(b)); len(hit) > 0 {
				t.Errorf("blob %s holds the %v", rel, hit)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if !retainedSeen {
			t.Error("no retained file holds the data: the blob dump proves nothing")
		}
		for _, k := range mails {
			if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(k))); !os.IsNotExist(err) {
				t.Errorf("the e-mail's blob %s: %v, want gone", k, err)
			}
		}
	})

	t.Run("unreachable", func(t *testing.T) {
		for name, key := range map[string]string{"admin": co.Secret, "agent": agentKey} {
			for _, path := range []string{"/contacts/" + ct, "/contracts/" + contract, "/documents/" + policyDoc,
				"/documents/" + otherDoc, "/tasks/" + task} {
				if r := env.Do(t, apitest.Request{Path: path, Key: key}); r.Status != 404 {
					t.Errorf("%s GET %s: %d, want 404", name, path, r.Status)
				}
			}
			for _, path := range []string{"/search?q=" + p.Last, "/contacts?q=" + p.Last, "/contracts?contactId=" + ct,
				"/contacts/" + partner + "/activities", "/events?limit=100"} {
				r := env.Do(t, apitest.Request{Path: path, Key: key})
				if hit := find(string(r.Body)); len(hit) > 0 || (r.Status != 200 && r.Status != 404 && r.Status != 422) {
					t.Errorf("%s GET %s: %d, shows the %v", name, path, r.Status, hit)
				}
			}
		}
		if r := env.Do(t, apitest.Request{Method: "POST", Path: "/contacts/" + ct + "/privacy/data-export", Key: co.Secret}); r.Status != 404 {
			t.Errorf("export of the erased contact: %d, want 404", r.Status)
		}
		// A retry of the contact's creation with its key neither replays the data nor writes it again.
		if r := env.Do(t, create); r.Status != 409 || len(find(string(r.Body))) > 0 {
			t.Errorf("replay of the idempotent create: %d %s", r.Status, r.Body)
		}
		if r := download(t, env, downloadPath(t, exp)); r.Status != 404 {
			t.Errorf("the earlier export's link: %d, want 404", r.Status)
		}
		// The erasure's record stays, visible as before.
		got := apitest.Get[apitest.Page[request]](t, env, agentKey, "/privacy-requests?contactId="+ct).Data
		if len(got) != 2 {
			t.Errorf("the agent's requests about the erased contact: %+v", got)
		}
	})
}

// seedMail gives contact ct an inbound e-mail from p in a thread of a shared mailbox (paused: no
// sync runs against it), with its raw message and one attachment in the bucket, both naming
// p; and an opt-out of p's address. It returns the two blob keys.
func seedMail(t *testing.T, env *apitest.Env, co *apitest.Company, ct string, p person) []string {
	t.Helper()
	ctx := context.Background()
	mb, err := env.Ops.CreateMailbox(ctx, env.Config.DataKeys, operator.NewMailbox{CompanyID: co.ID,
		Email: "team-" + co.ID.String()[:8] + "@makler.test", IMAPURL: "imap://127.0.0.1:1", SMTPURL: "smtp://127.0.0.1:1",
		Username: "team", Password: "geheim", Shared: true})
	if err != nil {
		t.Fatalf("mailbox: %v", err)
	}
	if _, err := env.OwnerDB.ExecContext(ctx, `UPDATE mailboxes SET sync_state = 'paused' WHERE id = $1`, mb.ID); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("brokerdesk-blobs-%d", os.Getpid()))
	raw := "email-raw/" + co.ID.String() + "/" + uuid.NewString()
	att := "email-attachments/" + co.ID.String() + "/" + uuid.NewString()
	for k, content := range map[string]string{
		raw: "From: " + p.First + " " + p.Last + " <" + p.Email + ">\r\nSubject: Meine IBAN\r\n\r\n" + p.IBAN + "\r\n",
		att: "Anlage von " + p.First + " " + p.Last + ", Tel. " + p.Phone,
	} {
		f := filepath.Join(dir, filepath.FromSlash(k))
		if err := os.MkdirAll(filepath.Dir(f), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	contact := uuid.MustParse(ct)
	env.InCompany(t, co.ID, func(ctx context.Context, db *ent.Client) error {
		now := time.Now()
		th, err := db.EmailThread.Create().SetMailboxID(mb.ID).SetSubject("Meine IBAN, " + p.Last).SetLastMessageAt(now).
			SetMessageCount(1).Save(ctx)
		if err != nil {
			return err
		}
		e, err := db.Email.Create().SetThreadID(th.ID).SetMailboxID(mb.ID).SetDirection("inbound").SetStatus("received").
			SetMessageID(uuid.NewString() + "@kunde.test").SetFromAddress(p.Email).SetFromName(p.First + " " + p.Last).
			SetTo([]schematype.MailAddress{{Email: mb.Email}}).SetSubject("Meine IBAN, " + p.Last).SetTextBody(p.IBAN).
			SetRawKey(raw).SetSentAt(now).Save(ctx)
		if err != nil {
			return err
		}
		if _, err := db.EmailAttachment.Create().SetEmailID(e.ID).SetThreadID(th.ID).SetFilename(p.Last + ".pdf").
			SetBlobKey(att).Save(ctx); err != nil {
			return err
		}
		if _, err := db.EmailLink.Create().SetEmailID(e.ID).SetThreadID(th.ID).SetContactID(contact).Save(ctx); err != nil {
			return err
		}
		_, err = db.EmailOptOut.Create().SetEmail(p.Email).Save(ctx)
		return err
	})
	return []string{raw, att}
}

// seedImport gives the company a completed import whose file (in the bucket) and one row (linked
// to contact ct) hold p's data, as app/imports writes them. It returns the file's blob key.
func seedImport(t *testing.T, env *apitest.Env, co *apitest.Company, ct string, p person) string {
	t.Helper()
	ctx := context.Background()
	key := "imports/" + co.ID.String() + "/" + uuid.NewString()
	f := filepath.Join(os.TempDir(), fmt.Sprintf("brokerdesk-blobs-%d", os.Getpid()), filepath.FromSlash(key))
	if err := os.MkdirAll(filepath.Dir(f), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f, []byte("Vorname;Nachname;E-Mail;IBAN\n"+p.First+";"+p.Last+";"+p.Email+";"+p.IBAN+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	imp := uuid.Must(uuid.NewV7())
	if _, err := env.OwnerDB.ExecContext(ctx, `INSERT INTO contact_imports (id, company_id, created_at, updated_at, status,
		format, contact_type, filename, size, sha256, blob_key) VALUES ($1, $2, now(), now(), 'completed', 'csv', 'private',
		'kunden.csv', 100, '', $3)`, imp, co.ID, key); err != nil {
		t.Fatalf("import: %v", err)
	}
	cells := fmt.Sprintf(`{"Vorname": %q, "Nachname": %q, "E-Mail": %q, "IBAN": %q}`, p.First, p.Last, p.Email, p.IBAN)
	if _, err := env.OwnerDB.ExecContext(ctx, `INSERT INTO contact_import_rows (id, company_id, import_id, row, cells,
		analysis, outcome, contact_id) VALUES ($1, $2, $3, 2, $4, 'valid', 'created', $5)`,
		uuid.Must(uuid.NewV7()), co.ID, imp, cells, ct); err != nil {
		t.Fatalf("import row: %v", err)
	}
	return key
}
