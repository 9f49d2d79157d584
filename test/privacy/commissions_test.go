package privacy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"mime/multipart"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/brokerdesk/brokerdesk/app/privacy"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// commissionEntry is a CommissionEntry as these tests read it.
type commissionEntry struct {
	ID           string  `json:"id"`
	StatementID  string  `json:"statementId"`
	ContractID   *string `json:"contractId"`
	ContactID    *string `json:"contactId"`
	PolicyNumber string  `json:"policyNumber"`
	Type         string  `json:"type"`
	Amount       string  `json:"amount"`
	BookedOn     string  `json:"bookedOn"`
	Description  string  `json:"description"`
	Note         *string `json:"note"`
	MatchedBy    *string `json:"matchedBy"`
	Line         int     `json:"line"`
}

// uploadStatement uploads a CSV commission statement of insurer and waits until its parse has
// ended (processed); it returns the statement's id.
func uploadStatement(t *testing.T, env *apitest.Env, key, insurer, csv string) string {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	_ = w.WriteField("format", "csv")
	_ = w.WriteField("insurerId", insurer)
	fw, _ := w.CreateFormFile("file", "abrechnung.csv")
	_, _ = fw.Write([]byte(csv))
	_ = w.Close()
	r := env.Do(t, apitest.Request{Method: "POST", Path: "/commission-statements", Key: key, Body: buf.Bytes(),
		Header: map[string]string{"Content-Type": w.FormDataContentType()}})
	if r.Status != 202 {
		t.Fatalf("statement: %d %s", r.Status, r.Body)
	}
	var st idOnly
	r.Decode(t, &st)
	deadline := time.Now().Add(60 * time.Second)
	for {
		var s struct {
			ImportStatus string `json:"importStatus"`
		}
		env.Do(t, apitest.Request{Path: "/commission-statements/" + st.ID, Key: key}).Decode(t, &s)
		switch {
		case s.ImportStatus == "processed":
			return st.ID
		case s.ImportStatus == "failed":
			t.Fatalf("statement %s failed", st.ID)
		case time.Now().After(deadline):
			t.Fatalf("statement %s is %s after 60 s", st.ID, s.ImportStatus)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestErasure_CommissionEntries: the person's commission entries (booked on its contract by the
// parse's match and by hand) stay in the books without the person. Before the erasure their
// booking text names the person (the positive control); after it:
//   - no list of /commission-entries (every filter, the admin's key and an agent's: unmatched
//     entries are every commissions reader's) shows the name, the note or the policy number
//     (the leak of issue 25: the contract's deletion unmatched the entries and left the text);
//   - the entries keep amount, date, type, statement and line, and the commission report's
//     total is unchanged (catches an erasure that deletes the vouchers instead of blanking);
//   - the other customer's entry on the same statement keeps its text and policy number
//     (catches a blanking by statement instead of by the person's contracts);
//   - retained_records holds each entry whole, blocked for 8 years as a voucher (catches a
//     blanking that loses the booking text the books must keep);
//   - the feed has no event with the name: the note was written while the entry was unmatched
//     (an event without the contact), then the entry was linked (catches an erasure that finds
//     events by the contact only);
//   - a dump of the company's rows finds the name only in retained_records, and of its blobs
//     only under retained/ and in the statement's file (the insurer's voucher of many persons,
//     kept whole under AO § 147 and served by no operation: docs/decisions/privacy.md).
func TestErasure_CommissionEntries(t *testing.T) {
	t.Parallel()
	env := setup(t)
	ctx := context.Background()
	co := env.NewCompany(t)
	key := co.Secret
	agentKey := co.UserKey(t, env.NewUser(t, co, "agent"))
	p, q := newPerson(), newPerson()
	ct := createContact(t, env, key, p, "")
	other := createContact(t, env, key, q, "")
	ins := apitest.Get[apitest.Page[idOnly]](t, env, key, "/insurers?vuNumber=5501")
	if len(ins.Data) == 0 {
		t.Fatal("no insurer 5501")
	}
	insurer := ins.Data[0].ID
	contract, policy := reportContract(t, env, key, ct, insurer, "011")
	_, otherPolicy := reportContract(t, env, key, other, insurer, "130")
	// A policy number the matcher does not know: the entry is linked by hand below.
	stray := "ST-" + uuid.NewString()[:8]

	booked := time.Now().AddDate(0, 0, -30)
	day := booked.Format("02.01.2006")
	csv := "Vertragsnummer;Buchungsdatum;Buchungsart;Provision;Buchungstext\n" +
		policy + ";" + day + ";Abschlussprovision;120,00;Provision " + p.Last + ", " + p.First + "\n" +
		stray + ";" + day + ";Abschlussprovision;45,50;Bestandsprovision " + p.First + " " + p.Last + "\n" +
		otherPolicy + ";" + day + ";Abschlussprovision;80,00;Provision " + q.Last + ", " + q.First + "\n"
	statement := uploadStatement(t, env, key, insurer, csv)

	list := func(k, query string) []commissionEntry {
		return apitest.Get[apitest.Page[commissionEntry]](t, env, k, "/commission-entries?limit=100&statementId="+statement+query).Data
	}
	byLine := map[int]commissionEntry{}
	for _, e := range list(key, "") {
		byLine[e.Line] = e
	}
	if len(byLine) != 3 || byLine[2].ContractID == nil || *byLine[2].ContractID != contract || byLine[3].ContractID != nil ||
		byLine[4].ContractID == nil {
		t.Fatalf("control: the statement's entries %+v, want line 2 and 4 matched, 3 not", byLine)
	}
	strayEntry := byLine[3].ID
	// The note, written while the entry is unmatched (its event names no contact), then the link.
	note := "Rückfrage bei " + p.First + " " + p.Last
	for _, body := range []map[string]any{{"note": note}, {"note": note, "contractId": contract}} {
		if r := env.Do(t, apitest.Request{Method: "PATCH", Path: "/commission-entries/" + strayEntry, Key: key, Body: body}); r.Status != 200 {
			t.Fatalf("PATCH %v: %d %s", body, r.Status, r.Body)
		}
	}

	window := "from=" + booked.AddDate(0, 0, -30).Format(time.DateOnly) + "&to=" + booked.AddDate(0, 0, 30).Format(time.DateOnly)
	report := func() string {
		return apitest.Get[totalOnly](t, env, key, "/reports/commissions?groupBy=contract_type&"+window).Total
	}
	totalBefore := report()
	needles := []string{p.First, p.Last, policy, stray}
	shows := func(b []byte) []string {
		var hit []string
		for _, n := range needles {
			if strings.Contains(strings.ToLower(string(b)), strings.ToLower(n)) {
				hit = append(hit, n)
			}
		}
		return hit
	}
	paths := []string{"/commission-entries?limit=100", "/commission-entries?limit=100&statementId=" + statement,
		"/commission-entries?limit=100&matched=false", "/commission-entries?limit=100&matched=true",
		"/commission-entries?limit=100&type=commission", "/commission-entries?limit=100&contractId=" + contract,
		"/commission-entries?limit=100&contactId=" + ct, "/commission-statements/" + statement, "/events?limit=100"}
	if r := env.Do(t, apitest.Request{Path: paths[0], Key: key}); len(shows(r.Body)) < len(needles) {
		t.Fatalf("control: before the erasure the entries show only %v: %s", shows(r.Body), r.Body)
	}

	er := requestErasure(t, env, key, ct)
	done := await(t, env, key, er)
	if done.Status != "completed" {
		t.Fatalf("erasure ended %s: %v", done.Status, done.Error)
	}
	if done.Summary["retained.commission_entry"] != 2 || done.Summary["blanked.commissionEntries"] != 2 ||
		done.Summary["retained.contract"] != 1 {
		t.Errorf("summary %v, want 2 entries retained and blanked", done.Summary)
	}

	for _, k := range []string{key, agentKey} {
		for _, path := range paths {
			r := env.Do(t, apitest.Request{Path: path, Key: k})
			if r.Status != 200 && r.Status != 404 {
				t.Errorf("GET %s: %d %s", path, r.Status, r.Body)
			}
			if hit := shows(r.Body); len(hit) > 0 {
				t.Errorf("GET %s after the erasure shows %v: %.500s", path, hit, r.Body)
			}
		}
	}
	after := map[int]commissionEntry{}
	for _, e := range list(key, "") {
		after[e.Line] = e
	}
	for line, amount := range map[int]string{2: "120.00", 3: "45.50"} {
		e, was := after[line], byLine[line]
		if e.ID != was.ID || e.Amount != amount || e.BookedOn != was.BookedOn || e.Type != "commission" ||
			e.Description != "" || e.Note != nil || e.PolicyNumber != "" || e.ContractID != nil || e.ContactID != nil || e.MatchedBy != nil {
			t.Errorf("line %d after the erasure: %+v, want the amount %s without the person", line, e, amount)
		}
	}
	if e := after[4]; e.Description != byLine[4].Description || e.PolicyNumber != otherPolicy || e.ContractID == nil ||
		!strings.Contains(e.Description, q.Last) {
		t.Errorf("the other customer's entry changed: %+v, before %+v", e, byLine[4])
	}
	if got := report(); got != totalBefore {
		t.Errorf("commission total %s, before %s: the booked amounts are the broker's books and stay", got, totalBefore)
	}

	// The originals, blocked: whole rows, kept as vouchers.
	rows, err := env.OwnerDB.QueryContext(ctx, `SELECT record_id::text, basis, retain_until, data->>'description',
		coalesce(data->>'note', ''), data->>'policy_number', (data->>'amount')::numeric(14,2)::text FROM retained_records
		WHERE request_id = $1 AND record_type = 'commission_entry' ORDER BY record_id`, er.ID)
	if err != nil {
		t.Fatal(err)
	}
	kept := map[string]string{}
	for rows.Next() {
		var id, basis, desc, note, pol, amount string
		var until time.Time
		if err := rows.Scan(&id, &basis, &until, &desc, &note, &pol, &amount); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(basis, "Buchungsbelege") || until.Year() != now().Year()+8 || !strings.Contains(desc, p.Last) {
			t.Errorf("retained entry %s: basis %q until %s description %q", id, basis, until, desc)
		}
		kept[id] = pol + "|" + note + "|" + amount
	}
	_ = rows.Close()
	if kept[byLine[2].ID] != policy+"||120.00" {
		t.Errorf("retained matched entry: %q", kept[byLine[2].ID])
	}
	if kept[strayEntry] != stray+"|"+note+"|45.50" {
		t.Errorf("retained linked entry: %q", kept[strayEntry])
	}

	t.Run("dump", func(t *testing.T) {
		names := []string{p.First, p.Last}
		holds := func(s string) bool {
			for _, n := range names {
				if strings.Contains(strings.ToLower(s), strings.ToLower(n)) {
					return true
				}
			}
			return false
		}
		for _, table := range env.TenantTables(t) {
			if table.Name == "retained_records" {
				continue
			}
			rows, err := env.OwnerDB.QueryContext(ctx, "SELECT row_to_json(t)::text FROM "+
				pgx.Identifier{"public", table.Name}.Sanitize()+" t WHERE "+pgx.Identifier{table.Column}.Sanitize()+" = $1", co.ID)
			if err != nil {
				t.Fatalf("dump %s: %v", table.Name, err)
			}
			for rows.Next() {
				var s string
				if err := rows.Scan(&s); err != nil {
					t.Fatal(err)
				}
				if holds(s) {
					t.Errorf("%s holds the person: %.400s", table.Name, s)
				}
			}
			_ = rows.Close()
		}
		// The statement's file is the insurer's voucher of many persons, kept whole (AO § 147
		// (1) Nr. 4) and served by no operation: the one blob outside retained/ allowed to
		// name the person.
		var statementKey string
		if err := env.OwnerDB.QueryRowContext(ctx, `SELECT blob_key FROM commission_statements WHERE id = $1`,
			statement).Scan(&statementKey); err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(os.TempDir(), fmt.Sprintf("brokerdesk-blobs-%d", os.Getpid()))
		seen := false
		err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.Contains(path, co.ID.String()) {
				return err
			}
			rel, _ := filepath.Rel(dir, path)
			rel = filepath.ToSlash(rel)
			b, err := os.ReadFile(path)
			if err != nil || !holds(string(b)) {
				return err
			}
			switch {
			case rel == statementKey:
				seen = true
			case strings.HasPrefix(rel, "retained/"):
			default:
				t.Errorf("blob %s holds the person", rel)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if !seen {
			t.Errorf("the statement's file %s does not name the person: the blob dump proves nothing", statementKey)
		}
	})
}

// TestErasure_WaitsForStatements: while a commission statement of the company is queued or
// being parsed, the erasure waits (ErrImportsRunning; the worker snoozes) and changes nothing;
// once the parse has ended it runs. Catches an erasure that runs beside a parse, whose entries
// (naming the person) would be left unmatched with their booking text once the contract is
// gone, where no erasure looks again.
func TestErasure_WaitsForStatements(t *testing.T) {
	t.Parallel()
	env := setup(t)
	ctx := context.Background()
	co := env.NewCompany(t)
	ct := createContact(t, env, co.Secret, newPerson(), "")
	st := uuid.New()
	if _, err := env.OwnerDB.Exec(`INSERT INTO commission_statements (id, created_at, updated_at, format, status,
		import_status, filename, size, sha256, blob_key, issues, company_id)
		VALUES ($1, now(), now(), 'csv', 'received', 'queued', 'abrechnung.csv', 1, repeat('0', 64), $2, '[]', $3)`,
		st, "seed/"+st.String(), co.ID); err != nil {
		t.Fatalf("statement: %v", err)
	}
	req := queueErasure(t, env, co, ct)
	m := eraser(t, env, nil, nil)
	for _, status := range []string{"queued", "processing"} {
		if _, err := env.OwnerDB.Exec(`UPDATE commission_statements SET import_status = $2 WHERE id = $1`, st, status); err != nil {
			t.Fatal(err)
		}
		if err := m.Erase(ctx, co.ID, req, 1, 8); !errors.Is(err, privacy.ErrImportsRunning) {
			t.Errorf("statement %s: %v, want ErrImportsRunning", status, err)
		}
		// The last attempt that waits does not fail the request either (a snooze is no attempt).
		if err := m.Erase(ctx, co.ID, req, 8, 8); !errors.Is(err, privacy.ErrImportsRunning) {
			t.Errorf("statement %s, last attempt: %v, want ErrImportsRunning", status, err)
		}
	}
	if r := env.Do(t, apitest.Request{Path: "/contacts/" + ct, Key: co.Secret}); r.Status != 200 {
		t.Fatalf("while the statement was parsed: contact %d, want it there", r.Status)
	}
	if _, err := env.OwnerDB.Exec(`UPDATE commission_statements SET import_status = 'processed' WHERE id = $1`, st); err != nil {
		t.Fatal(err)
	}
	if err := m.Erase(ctx, co.ID, req, 1, 8); err != nil {
		t.Fatalf("after the parse: %v", err)
	}
	if st, msg := requestState(t, env, req); st != "completed" {
		t.Errorf("request: %s %s", st, msg)
	}
}
