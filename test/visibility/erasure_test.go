package visibility

import (
	"bytes"
	"context"
	"fmt"
	"math/big"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app"
	"github.com/brokerdesk/brokerdesk/app/operator"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// erasedPerson is the personal data of the contact the test erases: unique per run, so a hit in
// any answer is this person's data and nothing else's.
type erasedPerson struct{ First, Last, Email, Phone, NewPhone, IBAN, External string }

var erasedSeq atomic.Int64

func newErasedPerson() erasedPerson {
	i := erasedSeq.Add(1)*1_000_000 + time.Now().UnixNano()%1_000_000
	return erasedPerson{First: fmt.Sprintf("Wendelin%d", i), Last: fmt.Sprintf("Tiefenbrunn%d", i),
		Email: fmt.Sprintf("wt%d@kunde.test", i), Phone: fmt.Sprintf("0172 %07d", i%10_000_000),
		NewPhone: fmt.Sprintf("0173 %07d", i%10_000_000),
		IBAN:     germanIBAN(fmt.Sprintf("37040044%010d", i%10_000_000_000)), External: fmt.Sprintf("ams-tiefenbrunn-%d", i)}
}

// germanIBAN is a valid DE IBAN of an 18-digit BBAN (ISO 13616 check digits): the contacts
// service validates the IBAN, and a shared example IBAN could be another contact's.
func germanIBAN(bban string) string {
	n, _ := new(big.Int).SetString(bban+"131400", 10) // D=13, E=14, check digits 00
	check := 98 - new(big.Int).Mod(n, big.NewInt(97)).Int64()
	return fmt.Sprintf("DE%02d%s", check, bban)
}

// markers are what no answer may contain after the erasure, by what they are.
func (p erasedPerson) markers() map[string]string {
	return map[string]string{"first name": p.First, "last name": p.Last, "e-mail": strings.ToLower(p.Email),
		// the phone as stored (E.164) or as typed: the digits after the trunk prefix
		"phone":           strings.TrimLeft(strings.ReplaceAll(p.Phone, " ", ""), "0"),
		"requested phone": strings.TrimLeft(strings.ReplaceAll(p.NewPhone, " ", ""), "0"), "IBAN": p.IBAN, "external id": p.External}
}

// uploadTyped uploads content named name as a document of type typ of contact, as key.
func (w *world) uploadTyped(t *testing.T, key, contact, typ, name string, content []byte) string {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	_ = mw.WriteField("type", typ)
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name="file"; filename="`+name+`"`)
	h.Set("Content-Type", "application/pdf")
	fw, _ := mw.CreatePart(h)
	_, _ = fw.Write(content)
	_ = mw.Close()
	r := w.env.Do(t, apitest.Request{Method: "POST", Path: "/contacts/" + contact + "/documents", Key: key, Body: buf.Bytes(),
		Header: map[string]string{"Content-Type": mw.FormDataContentType()}})
	if r.Status != 201 {
		t.Fatalf("upload %s: %d %s", typ, r.Status, r.Body)
	}
	return idOf(t, r)
}

// waitFor polls path as key until ok says the answer is final (60 s at most).
func (w *world) waitFor(t *testing.T, key, path, what string, ok func(*apitest.Response) bool) *apitest.Response {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		r := w.env.Do(t, apitest.Request{Path: path, Key: key})
		if ok(r) {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not done after 60 s: %d %s", what, r.Status, r.Body)
		}
	}
}

// privacyRequestDone waits for privacy request id about contact to end (60 s at most) and
// returns its status.
func (w *world) privacyRequestDone(t *testing.T, key, contact, id string) string {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		var page struct{ Data []struct{ ID, Status string } }
		w.do(t, key, "GET", "/privacy-requests?contactId="+contact, nil, 200).Decode(t, &page)
		for _, x := range page.Data {
			if x.ID == id && (x.Status == "completed" || x.Status == "failed") {
				return x.Status
			}
		}
		if time.Now().After(deadline) {
			var errs string
			_ = w.env.OwnerDB.QueryRow(`SELECT coalesce(string_agg(kind || ' ' || state || ' ' || errors::text, E'\n'), '')
				FROM river.river_job WHERE args->>'requestId' = $1`, id).Scan(&errs)
			t.Fatalf("privacy request %s has not ended after 60 s; its jobs: %s", id, errs)
		}
	}
}

// syncedAll waits until every outbound e-mail of the mailboxes was sent and a sync began and
// ended after that (synced_at), so the copies on the mail server are in the database and the
// controls below can list every e-mail with the person's address before the erasure. (A
// message not yet synced when an erasure runs is the erasure's own sync's to bring in:
// test/privacy TestErasure_MailNotSyncedYet.)
func (w *world) syncedAll(t *testing.T, boxes ...operator.Mailbox) {
	t.Helper()
	for _, mb := range boxes {
		var sent time.Time
		for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			var queued int
			var last *time.Time
			if err := w.env.OwnerDB.QueryRow(`SELECT count(*) FILTER (WHERE status = 'queued'),
				max(updated_at) FROM emails WHERE mailbox_id = $1 AND direction = 'outbound'`, mb.ID).Scan(&queued, &last); err != nil {
				t.Fatal(err)
			}
			if queued == 0 {
				if last != nil {
					sent = *last
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("mailbox %s: %d e-mails not sent after 60 s", mb.Email, queued)
			}
		}
		// Two syncs that ended after the last send: the second began after the first ended (a
		// mailbox's runs do not overlap), so after the send.
		after := sent
		for i := 0; i < 2; i++ {
			for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
				var synced *time.Time
				if err := w.env.OwnerDB.QueryRow(`SELECT synced_at FROM mailboxes WHERE id = $1`, mb.ID).Scan(&synced); err != nil {
					t.Fatal(err)
				}
				if synced != nil && synced.After(after) {
					after = *synced
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("mailbox %s: no sync ended after %v within 60 s", mb.Email, after)
				}
			}
		}
	}
}

// paramValue is a value for a path parameter; erased says it names a record the erasure removed.
type paramValue struct {
	v      string
	erased bool
}

var fiberParam = regexp.MustCompile(`:([A-Za-z]+)`)

// TestVisibility_ErasedContactUnreachable is issue 25's "run the whole visibility matrix
// against them": agent A's customer with everything that hangs off a contact (contracts, one
// with a booked commission, a retained and a deleted document, an extraction, a note, a task,
// an appointment, a converted lead, a relationship to a second contact, an e-mail sent to it, a
// correspondence case, a signature request, an advice record, a portal access, an earlier data
// export) is erased by the manager; then every GET route of the server under /api/public/v1
// and every public GET route that takes an id or token (read from the server, so a new route is
// covered the day it is added) is called with every credential of the world, its path
// parameters filled with the erased records' ids (and, for contactId, the partner's, whose
// relationship list and activities once named the person), its lists with the documented
// filters that could find the person (q, contactId, email …, from the OpenAPI document); and
// the portal pages with the customer's own session. Every e-mail with the person's address
// counts as erased, also those sent unlinked (the portal invitation, the signature request's).
// Each check names the bug it catches where it is made; a control before the erasure shows
// that the routes read did show the person.
func TestVisibility_ErasedContactUnreachable(t *testing.T) {
	t.Parallel()
	// A server of its own that works jobs: the erasure, the export, the statement's import and
	// the extraction run on the queue.
	// The IMAP sync visits the mailboxes every second (MAIL_SYNC_EVERY): the mail sent below is
	// in the database as the sync stores it before the erasure runs (see syncedAll).
	w := newWorld(t, app.WithConfig(func(c *app.Config) { c.Mail.SyncEvery = time.Second }))
	ctx := context.Background()
	if err := w.env.Server.StartJobs(ctx); err != nil {
		t.Fatalf("start jobs: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		_ = w.env.Server.StopJobs(ctx)
	})
	mails := w.mailboxes(t) // grants points too (the extraction pays with one)
	co, keyA := w.co.Secret, w.keys["agent A key"]
	p := newErasedPerson()
	tag := uuid.NewString()[:8]

	// The person, agent A's customer, with every group that holds personal data.
	ct := idOf(t, w.do(t, co, "POST", "/contacts", map[string]any{"type": "private", "firstName": p.First, "lastName": p.Last,
		"email": p.Email, "ownerId": w.agentA.ID.String(), "phones": []map[string]any{{"number": p.Phone}},
		"bank":               map[string]any{"iban": p.IBAN, "bic": "COBADEFFXXX"},
		"externalReferences": []map[string]string{{"source": "ams", "externalId": p.External}}}, 201))
	partner := idOf(t, w.do(t, co, "POST", "/contacts", map[string]any{"type": "private", "firstName": "Paula",
		"lastName": "Partnerin", "ownerId": w.agentA.ID.String()}, 201))
	w.do(t, keyA, "POST", "/contacts/"+ct+"/relationships", map[string]any{"relatedContactId": partner, "role": "partner"}, 201)
	note := idOf(t, w.do(t, keyA, "POST", "/contacts/"+ct+"/notes", map[string]any{"content": "Telefonat mit " + p.First + " " +
		p.Last + ", IBAN " + p.IBAN}, 201))
	w.do(t, co, "PUT", "/contacts/"+ct+"/finance", map[string]any{"income": []map[string]any{{"type": "salary", "amount": "4321.00"}}}, 200)

	// A contract with a booked commission (retained as a voucher), from a statement the job reads.
	policy := "ER" + tag
	contract := w.createContract(t, co, ct, policy).ID
	// The booking text names the person, as insurers write it: the erasure keeps the entry in
	// the books without it (docs/decisions/privacy.md "Commission entries").
	csv := "Vertragsnummer;Buchungsdatum;Buchungsart;Provision;Buchungstext\n" + policy +
		";31.01.2026;Abschlussprovision;120,00;AP " + p.Last + ", " + p.First + "\n"
	body, ctype := commissionUpload(t, map[string]string{"format": "csv", "insurerId": w.insurer(t, co)}, []byte(csv))
	r := w.env.Do(t, apitest.Request{Method: "POST", Path: "/commission-statements", Key: co, Body: body,
		Header: map[string]string{"Content-Type": ctype}})
	if r.Status != 202 {
		t.Fatalf("commission statement: %d %s", r.Status, r.Body)
	}
	statement := idOf(t, r)
	w.waitFor(t, co, "/commission-statements/"+statement, "the statement's import", func(r *apitest.Response) bool {
		var s struct {
			ImportStatus string
			MatchedCount int
		}
		r.Decode(t, &s)
		if s.ImportStatus == "failed" || (s.ImportStatus == "processed" && s.MatchedCount != 1) {
			t.Fatalf("the statement's entry is not booked on the contract: %s", r.Body)
		}
		return s.ImportStatus == "processed"
	})

	// Documents: a policy (retained: a business letter) and one of no retained type (deleted).
	named := []byte("%PDF-1.4\n% Versicherungsnehmer: " + p.First + " " + p.Last + ", IBAN " + p.IBAN + "\n%%EOF\n")
	policyDoc := w.uploadTyped(t, co, ct, "policy", "Police "+p.Last+".pdf", named)
	otherDoc := w.uploadTyped(t, co, ct, "other", "Notiz "+p.Last+".pdf", named)
	extraction := idOf(t, w.do(t, co, "POST", "/documents/"+policyDoc+"/extractions", map[string]any{}, 202))
	w.waitFor(t, co, "/extractions/"+extraction, "the extraction", func(r *apitest.Response) bool {
		var e struct{ Status string }
		r.Decode(t, &e)
		return e.Status != "queued" && e.Status != "processing"
	})

	task := idOf(t, w.do(t, keyA, "POST", "/tasks", map[string]any{"title": "Rückruf " + p.Last, "contactId": ct}, 201))
	appointment := idOf(t, w.do(t, keyA, "POST", "/appointments", map[string]any{"title": "Beratung " + p.Last,
		"startAt": "2026-05-04T10:00:00", "endAt": "2026-05-04T11:00:00", "contactId": ct}, 201))
	lead := w.createLead(t, keyA, map[string]any{"firstName": p.First, "lastName": p.Last, "email": p.Email,
		"ownerId": w.agentA.ID}).ID
	w.do(t, keyA, "POST", "/leads/"+lead+"/convert", map[string]any{"contactType": "private", "existingContactId": ct}, 201)
	emailID, _ := w.sendMail(t, keyA, mails.personalA, p.Email, "Ihr Angebot, "+p.First+" "+p.Last, map[string]any{"contactId": ct})
	var em struct{ ThreadID string }
	w.do(t, keyA, "GET", "/emails/"+emailID, nil, 200).Decode(t, &em)
	corrCase := w.correspondenceCase(t, keyA, ct)
	signature := w.signatureRequest(t, keyA, ct)
	advice := w.adviceRecord(t, keyA, ct)
	// The customer's portal: the invitation accepted (a session in the browser's cookies) and
	// a change request with a new phone number pending.
	w.do(t, keyA, "POST", "/contacts/"+ct+"/portal-access", nil, 201)
	portal := &portalBrowser{w: w, cookies: map[string]string{}}
	invitation := waitMail(t, mails, p.Email, "Ihr Zugang zum Kundenportal")
	link := portalLinkRE.FindStringSubmatch(invitation.Text)
	if link == nil {
		t.Fatalf("no invitation link in the mail:\n%s", invitation.Text)
	}
	if r := portal.submit(t, link[1], link[1], url.Values{"password": {"Sommer am Meer 2026"}, "repeat": {"Sommer am Meer 2026"}}); r.Status != 303 {
		t.Fatalf("accept the invitation: %d %s", r.Status, r.Body)
	}
	if r := portal.submit(t, portal.base()+"/changes/new/phone", portal.base()+"/changes/new/phone",
		url.Values{"number": {p.NewPhone}}); r.Status != 303 {
		t.Fatalf("the customer's change request: %d %s", r.Status, r.Body)
	}

	// An earlier export: its link must die with the rest.
	var export struct {
		ID          string
		DownloadURL *string
	}
	w.do(t, w.keys["manager key"], "POST", "/contacts/"+ct+"/privacy/data-export", nil, 202).Decode(t, &export)
	// The link is in the 202 answer only (the list never shows it again).
	if export.DownloadURL == nil || !strings.Contains(*export.DownloadURL, "/privacy-downloads/") {
		t.Fatalf("the export's link: %v", export.DownloadURL)
	}
	exportToken := (*export.DownloadURL)[strings.LastIndex(*export.DownloadURL, "/")+1:]
	if st := w.privacyRequestDone(t, co, ct, export.ID); st != "completed" {
		t.Fatalf("the export ended %s", st)
	}
	if r := w.env.Do(t, apitest.Request{Path: "//privacy-downloads/" + exportToken}); r.Status != 200 {
		t.Fatalf("control: the export's link before the erasure: %d %s", r.Status, r.Body)
	}

	// The positive control: before the erasure, the routes below do show the person, so a
	// check that finds nothing afterwards has looked where the data was.
	markers := p.markers()
	// hits are the markers in an answer to path; a marker the path itself carries (the
	// external id, a q filter) may come back in a 404's or 422's detail and instance: the
	// caller sent it.
	hits := func(path string, b []byte) []string {
		low := strings.ToLower(string(b))
		var out []string
		for what, m := range markers {
			m = strings.ToLower(m)
			if !strings.Contains(strings.ToLower(path), m) && strings.Contains(low, m) {
				out = append(out, what)
			}
		}
		slices.Sort(out)
		return out
	}
	for _, path := range []string{"/contacts/" + ct + "?fields=bank", "/contacts/" + ct + "/notes/" + note,
		"/tasks/" + task, "/search?q=" + p.Last, "/emails/" + emailID, "/documents/" + policyDoc,
		"/commission-entries?statementId=" + statement} {
		if r := w.env.Do(t, apitest.Request{Path: path, Key: co}); r.Status != 200 || len(hits("", r.Body)) == 0 {
			t.Fatalf("control: before the erasure %s shows none of the data: %d %s", path, r.Status, r.Body)
		}
	}

	// Every e-mail with the person's address, read below the API: besides the offer (linked to
	// the contact) the portal invitation and the signature request's mail, which are sent
	// unlinked on purpose (the link must stay off the timeline) but name and address the person.
	var personMails []string
	rows, err := w.env.OwnerDB.QueryContext(ctx, `SELECT id::text FROM emails WHERE company_id = $1
		AND (lower(from_address) = $2 OR lower("to"::text) LIKE '%' || $2 || '%') ORDER BY created_at`, w.co.ID, strings.ToLower(p.Email))
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		personMails = append(personMails, id)
	}
	_ = rows.Close()
	if len(personMails) < 3 {
		t.Fatalf("control: %d e-mails with the person's address, want the offer, the invitation and the signature request's", len(personMails))
	}

	w.syncedAll(t, mails.personalA, mails.personalB, mails.shared)

	if r := portal.do(t, "GET", portal.base()+"/", nil); r.Status != 200 || len(hits("", r.Body)) == 0 {
		t.Fatalf("control: before the erasure the customer's portal shows none of the data: %d %s", r.Status, r.Body)
	}

	erasure := idOf(t, w.do(t, w.keys["manager key"], "POST", "/contacts/"+ct+"/privacy/erasure",
		map[string]any{"reason": "Antrag nach Art. 17 DSGVO"}, 202))
	if st := w.privacyRequestDone(t, co, ct, erasure); st != "completed" {
		t.Fatalf("the erasure ended %s", st)
	}

	// The booked entry stays on its statement, unmatched, and the statement counts it so (the
	// bug: the foreign key left matched_by set, the check constraint refused the contract's
	// delete and the erasure failed on every attempt).
	var stmt struct{ MatchedCount int }
	w.do(t, co, "GET", "/commission-statements/"+statement, nil, 200).Decode(t, &stmt)
	var entries struct {
		Data []struct{ ContractID, ContactID, MatchedBy *string }
	}
	w.do(t, co, "GET", "/commission-entries?statementId="+statement, nil, 200).Decode(t, &entries)
	if stmt.MatchedCount != 0 || len(entries.Data) != 1 || entries.Data[0].ContractID != nil || entries.Data[0].MatchedBy != nil {
		t.Errorf("the booked entry after the erasure: statement matchedCount %d, entries %+v", stmt.MatchedCount, entries.Data)
	}

	// Path parameters: the erased records of each kind; a real id of something that stays
	// where the world has one; a fresh UUID (or a plausible value) for everything else.
	erased := func(ids ...string) []paramValue {
		var out []paramValue
		for _, id := range ids {
			out = append(out, paramValue{id, true})
		}
		return out
	}
	params := map[string][]paramValue{
		"contactId":          append(erased(ct), paramValue{partner, false}),
		"contractId":         erased(contract),
		"documentId":         erased(policyDoc, otherDoc),
		"noteId":             erased(note),
		"taskId":             erased(task),
		"appointmentId":      erased(appointment),
		"leadId":             erased(lead),
		"emailId":            erased(personMails...),
		"threadId":           erased(em.ThreadID),
		"caseId":             erased(corrCase),
		"signatureRequestId": erased(signature),
		"adviceRecordId":     erased(advice),
		"extractionId":       erased(extraction),
		"externalId":         erased(p.External),
		"statementId":        {{statement, false}},
		"userId":             {{w.agentA.ID.String(), false}},
		"companyId":          {{w.co.ID.String(), false}},
		"source":             {{"ams", false}},
		"kind":               {{"address", false}},
	}
	// Routes of the public API named by the token of an erased record.
	tokens := map[string][]paramValue{"/privacy-downloads/:token": erased(exportToken)}

	doc, err := openapi3.NewLoader().LoadFromData(w.env.Do(t, apitest.Request{Path: "/openapi.json"}).Body)
	if err != nil {
		t.Fatalf("the OpenAPI document: %v", err)
	}
	// listQueries are the query strings a route is called with: its required parameters with
	// plausible values, and once more with each filter that could find the person.
	finders := map[string]string{"q": p.Last, "contactId": ct, "email": p.Email, "relatedContactId": ct,
		"externalId": p.External, "policyNumber": policy,
		"fields": "bank"} // the sealed group with the IBAN, where a route can show it
	listQueries := func(route string) []string {
		op := (*openapi3.Operation)(nil)
		if item := doc.Paths.Find(strings.TrimPrefix(fiberParam.ReplaceAllString(route, "{$1}"), app.V1Prefix)); item != nil {
			op = item.Get
		}
		if op == nil {
			return []string{""}
		}
		base := []string{}
		var filters []string
		for _, pr := range op.Parameters {
			if pr.Value == nil || pr.Value.In != "query" {
				continue
			}
			name := pr.Value.Name
			switch {
			case name == "limit":
				base = append(base, "limit=100")
			case pr.Value.Required && finders[name] != "": // /search?q=
				base = append(base, name+"="+url.QueryEscape(finders[name]))
			case pr.Value.Required:
				base = append(base, name+"="+url.QueryEscape(plausible(name, pr.Value.Schema)))
			case finders[name] != "":
				filters = append(filters, name+"="+url.QueryEscape(finders[name]))
			}
		}
		qs := []string{strings.Join(base, "&")}
		for _, f := range filters {
			qs = append(qs, strings.Join(append(slices.Clone(base), f), "&"))
		}
		return qs
	}

	type call struct {
		path   string
		erased bool
	}
	var calls []call
	var routes []string
	for _, rt := range w.env.Server.App.GetRoutes(true) {
		public := !strings.HasPrefix(rt.Path, app.V1Prefix) && strings.Contains(rt.Path, ":")
		if rt.Method == http.MethodGet && (strings.HasPrefix(rt.Path, app.V1Prefix) || public) {
			routes = append(routes, rt.Path)
		}
	}
	slices.Sort(routes)
	routes = slices.Compact(routes)
	for _, route := range routes {
		names := fiberParam.FindAllStringSubmatch(route, -1)
		// Every combination of the parameters' values (documentId has two, contactId two).
		paths := []call{{route, false}}
		for _, m := range names {
			vals := params[m[1]]
			if vs, ok := tokens[route]; ok && m[1] == "token" {
				vals = vs
			}
			if len(vals) == 0 {
				vals = []paramValue{{uuid.NewString(), false}}
			}
			var next []call
			for _, c := range paths {
				for _, v := range vals {
					next = append(next, call{strings.Replace(c.path, m[0], v.v, 1), c.erased || v.erased})
				}
			}
			paths = next
		}
		for _, c := range paths {
			for _, q := range listQueries(route) {
				if q != "" {
					q = "?" + q
				}
				calls = append(calls, call{"/" + c.path + q, c.erased})
			}
		}
	}

	names := make([]string, 0, len(w.keys))
	for name := range w.keys {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		key := w.keys[name]
		t.Run(name, func(t *testing.T) {
			for _, c := range calls {
				r := w.env.Do(t, apitest.Request{Path: c.path, Key: key})
				switch {
				// A route that fails on a dangling reference the erasure left (a row whose contact
				// or document is gone), or on a record it cannot find any more.
				case r.Status >= 500:
					t.Errorf("GET %s: %d: %.300s", c.path[1:], r.Status, r.Body)
				// A record the erasure should have deleted or blocked that is still served: a table
				// it forgot, a cascade that does not reach, a retained record readable by the app.
				case c.erased && r.Status == 200:
					t.Errorf("GET %s names an erased record and answers 200: %.300s", c.path[1:], r.Body)
				}
				// The person's data in any answer, of any status: a list, a search index, the feed,
				// a report, an error's detail, a file that kept it after the erasure.
				if h := hits(c.path, r.Body); len(h) > 0 {
					t.Errorf("GET %s: %d shows the %v: %.300s", c.path[1:], r.Status, h, r.Body)
				}
			}
		})
	}
	// The erased customer's own portal session: the account and its sessions went with the
	// contact (a session that outlives the erasure would show the retained contracts and
	// documents to whoever holds the cookie).
	t.Run("the customer's portal session", func(t *testing.T) {
		for _, c := range calls {
			if !strings.HasPrefix(c.path, "//portal/") {
				continue
			}
			r := portal.do(t, "GET", c.path[1:], nil)
			// The session is worth nothing: every page answers as to a visitor without one
			// (the login and reset pages are 200 to anyone).
			if anon := w.env.Do(t, apitest.Request{Path: c.path}); r.Status != anon.Status || r.Status >= 500 {
				t.Errorf("GET %s with the erased customer's session: %d, without a session %d: %.300s", c.path[1:], r.Status,
					anon.Status, r.Body)
			}
			if h := hits(c.path, r.Body); len(h) > 0 {
				t.Errorf("GET %s with the erased customer's session shows the %v: %.300s", c.path[1:], h, r.Body)
			}
		}
	})
	t.Logf("%d routes, %d calls × %d credentials = %d requests", len(routes), len(calls), len(names), len(calls)*len(names))
}

// plausible is a value for a required query parameter of schema s: a window around the
// world's records for from and to (the appointments' list requires one).
func plausible(name string, s *openapi3.SchemaRef) string {
	switch name {
	case "from":
		return "2026-01-01T00:00:00+01:00"
	case "to":
		return "2026-12-31T00:00:00+01:00"
	}
	if s != nil && s.Value != nil {
		v := s.Value
		switch {
		case len(v.Enum) > 0:
			return fmt.Sprint(v.Enum[0])
		case v.Format == "date":
			if strings.Contains(strings.ToLower(name), "to") || strings.Contains(strings.ToLower(name), "until") {
				return "2026-12-31"
			}
			return "2026-01-01"
		case v.Format == "date-time":
			return "2026-01-01T00:00:00Z"
		case v.Format == "uuid":
			return uuid.NewString()
		case v.Type != nil && (v.Type.Is("integer") || v.Type.Is("number")):
			return "1"
		}
	}
	return "x"
}
