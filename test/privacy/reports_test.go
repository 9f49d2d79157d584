package privacy

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// reportContract creates an active contract of type typ for contact ct through POST /contracts,
// ending in 30 days (due in the renewals report); it returns its id and policy number.
func reportContract(t *testing.T, env *apitest.Env, key, ct, insurer, typ string) (id, policy string) {
	t.Helper()
	policy = "RP-" + uuid.NewString()[:8]
	id = apitest.Create[idOnly](t, env, key, "/contracts", map[string]any{"contactId": ct, "insurerId": insurer,
		"type": typ, "status": "active", "policyNumber": policy, "startDate": "2024-01-01",
		"endDate": time.Now().AddDate(0, 0, 30).Format(time.DateOnly), "premium": "10.00", "paymentFrequency": "monthly"}).ID
	return id, policy
}

// bookCommission stores a commission statement with one commission entry on contract of ct, as
// the statement's parse leaves it (the operator role pinned to the company).
func bookCommission(t *testing.T, env *apitest.Env, co *apitest.Company, insurer, contract, ct string, booked time.Time) {
	t.Helper()
	st := uuid.New()
	err := env.Operator(context.Background(), co.ID, func(tx *sql.Tx) error {
		if _, err := tx.Exec(`INSERT INTO commission_statements (id, created_at, updated_at, format, status, import_status,
			filename, size, sha256, blob_key, issues, entry_count, company_id)
			VALUES ($1, now(), now(), 'csv', 'received', 'processed', 'seed.csv', 1, repeat('0', 64), $2, '[]', 1, $3)`,
			st, "seed/"+st.String(), co.ID); err != nil {
			return err
		}
		_, err := tx.Exec(`INSERT INTO commission_entries (id, created_at, updated_at, statement_id, insurer_id, contract_id,
			contact_id, matched_by, type, amount, booked_on, line, company_id)
			VALUES (gen_random_uuid(), now(), now(), $1, $2, $3, $4, 'auto', 'commission', 1200.00, $5, 1, $6)`,
			st, insurer, contract, ct, booked.Format(time.DateOnly), co.ID)
		return err
	})
	if err != nil {
		t.Fatalf("commission entry: %v", err)
	}
}

type portfolioTotals struct {
	Totals struct {
		Contracts, Contacts int64
	} `json:"totals"`
}

type totalOnly struct {
	Total string `json:"total"`
}

// TestErasure_ReportsForget: after an erasure the five reports and the search show nothing of
// the contact: the portfolio counts one contract and one contact fewer, renewals, cross-selling
// and the cancellation liability list only the other customer, the commission report keeps the
// booked amount (the broker's books) without the contract or the person, and the search finds
// neither the name nor the e-mail. Each report is read before too (the positive control: it did
// show the contact). Catches a report that reads a table the erasure forgot (commission entries'
// links, the cross-selling rows, the search columns) or a cached aggregate.
func TestErasure_ReportsForget(t *testing.T) {
	t.Parallel()
	env := setup(t)
	co := env.NewCompany(t)
	key := co.Secret
	p := newPerson()
	ct := createContact(t, env, key, p, "")
	other := createContact(t, env, key, newPerson(), "")
	ins := apitest.Get[apitest.Page[idOnly]](t, env, key, "/insurers?vuNumber=5501")
	if len(ins.Data) == 0 {
		t.Fatal("no insurer 5501")
	}
	insurer := ins.Data[0].ID
	contract, policy := reportContract(t, env, key, ct, insurer, "011")
	otherContract, _ := reportContract(t, env, key, other, insurer, "130")
	booked := time.Now().AddDate(0, 0, -30)
	bookCommission(t, env, co, insurer, contract, ct, booked)
	bookCommission(t, env, co, insurer, otherContract, other, booked)

	day := func(d time.Time) string { return d.Format(time.DateOnly) }
	window := "from=" + day(time.Now().AddDate(0, 0, -60)) + "&to=" + day(time.Now().AddDate(0, 0, 60))
	paths := map[string]string{
		"portfolio":              "/reports/portfolio",
		"renewals":               "/reports/renewals?limit=100&" + window,
		"cross-selling":          "/reports/cross-selling?limit=100",
		"commissions":            "/reports/commissions?groupBy=contract_type&" + window,
		"cancellation-liability": "/reports/cancellation-liability",
		"search by name":         "/search?q=" + p.Last,
		"search by e-mail":       "/search?q=" + p.Email,
	}
	// What names the person or its contract in a report's body.
	needles := []string{ct, contract, policy, p.First, p.Last, strings.ToLower(p.Email)}
	shows := func(body []byte) []string {
		var hit []string
		low := strings.ToLower(string(body))
		for _, n := range needles {
			if strings.Contains(low, strings.ToLower(n)) {
				hit = append(hit, n)
			}
		}
		return hit
	}
	get := func(path string) *apitest.Response {
		r := env.Do(t, apitest.Request{Path: path, Key: key})
		if r.Status != 200 {
			t.Fatalf("GET %s: %d %s", path, r.Status, r.Body)
		}
		return r
	}
	before := map[string]*apitest.Response{}
	for name, path := range paths {
		before[name] = get(path)
		// The portfolio and commission reports name no person or contract even before
		// (aggregates): their counts and totals are the control.
		if name != "commissions" && name != "portfolio" && len(shows(before[name].Body)) == 0 {
			t.Errorf("%s before the erasure does not show the contact: the test proves nothing: %.300s", name, before[name].Body)
		}
	}
	var pf portfolioTotals
	before["portfolio"].Decode(t, &pf)
	var liab, comm totalOnly
	before["cancellation-liability"].Decode(t, &liab)
	before["commissions"].Decode(t, &comm)

	er := requestErasure(t, env, key, ct)
	if done := await(t, env, key, er); done.Status != "completed" {
		t.Fatalf("erasure ended %s: %v", done.Status, done.Error)
	}

	for name, path := range paths {
		r := get(path)
		if hit := shows(r.Body); len(hit) > 0 {
			t.Errorf("%s after the erasure shows %v: %.400s", name, hit, r.Body)
		}
	}
	var pf2 portfolioTotals
	get(paths["portfolio"]).Decode(t, &pf2)
	if pf2.Totals.Contracts != pf.Totals.Contracts-1 || pf2.Totals.Contacts != pf.Totals.Contacts-1 {
		t.Errorf("portfolio totals %+v, before %+v: want one contract and one contact fewer", pf2.Totals, pf.Totals)
	}
	for name, id := range map[string]string{"renewals": otherContract, "cross-selling": other, "cancellation-liability": otherContract} {
		if r := get(paths[name]); !strings.Contains(string(r.Body), id) {
			t.Errorf("%s after the erasure lost the other customer too: %.300s", name, r.Body)
		}
	}
	var liab2, comm2 totalOnly
	get(paths["cancellation-liability"]).Decode(t, &liab2)
	get(paths["commissions"]).Decode(t, &comm2)
	if liab2.Total == liab.Total {
		t.Errorf("cancellation liability total %s, unchanged: the erased contract's liability is still counted", liab2.Total)
	}
	if comm2.Total != comm.Total {
		t.Errorf("commission total %s, before %s: the booked entries are the broker's books and stay", comm2.Total, comm.Total)
	}
}
