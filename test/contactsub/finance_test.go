package contactsub

import (
	"testing"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

type finance struct {
	Income []struct {
		Type     string `json:"type"`
		Amount   string `json:"amount"`
		Interval string `json:"interval"`
	} `json:"income"`
	Assets      []any             `json:"assets"`
	Liabilities []any             `json:"liabilities"`
	Totals      map[string]string `json:"totals"`
	UpdatedAt   *string           `json:"updatedAt"`
}

func TestContactSub_Finance(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a, b := env.NewCompany(t), env.NewCompany(t)
	ada := insertContact(t, env, a.ID, "private", "Lovelace", nil)
	firm := insertContact(t, env, a.ID, "business", "Engines GmbH", nil)
	path := "/contacts/" + ada + "/finance"

	var empty finance
	r := must(t, do(t, env, "GET", path, a.Secret, nil), 200)
	r.Decode(t, &empty)
	if empty.UpdatedAt != nil || empty.Totals["netWorth"] != "0.00" || len(empty.Income) != 0 || r.Header.Get("ETag") != `"0"` {
		t.Errorf("finances before the first write: %s", r.Body)
	}
	body := map[string]any{
		"income": []map[string]any{
			{"type": "salary", "amount": "3000", "description": "Netto"},
			{"type": "other", "amount": "1200.00", "interval": "yearly"},
			{"type": "rental", "amount": "100.01", "interval": "quarterly"},
		},
		"expenses":    []map[string]any{{"type": "rent", "amount": "1100.50"}},
		"assets":      []map[string]any{{"type": "securities", "amount": "25000"}},
		"liabilities": []map[string]any{{"type": "mortgage", "amount": "180000", "monthlyPayment": "950"}},
		"realEstate":  []map[string]any{{"type": "owner_occupied", "amount": "400000"}},
	}
	var f finance
	r = must(t, do(t, env, "PUT", path, a.Secret, body), 200)
	r.Decode(t, &f)
	etag := r.Header.Get("ETag")
	want := map[string]string{"monthlyIncome": "3133.34", "monthlyExpenses": "1100.50", "monthlyLiabilityPayments": "950.00",
		"monthlySurplus": "1082.84", "assets": "25000.00", "realEstate": "400000.00", "liabilities": "180000.00", "netWorth": "245000.00"}
	for k, v := range want {
		if f.Totals[k] != v {
			t.Errorf("totals.%s = %q, want %q", k, f.Totals[k], v)
		}
	}
	if f.Income[0].Interval != "monthly" || f.Income[0].Amount != "3000.00" {
		t.Errorf("income[0] %+v: want interval monthly, amount 3000.00", f.Income[0])
	}
	// Present lists replace, omitted lists stay, empty lists clear.
	r = must(t, do(t, env, "PUT", path, a.Secret, map[string]any{"assets": []any{}}), 200)
	r.Decode(t, &f)
	if len(f.Income) != 3 || len(f.Assets) != 0 || len(f.Liabilities) != 1 || f.Totals["netWorth"] != "220000.00" {
		t.Errorf("after clearing assets: %s", r.Body)
	}
	env.Run(t, []apitest.Case{
		{Name: "business contact reads", Key: a.Secret, Path: "/contacts/" + firm + "/finance", Status: 422, Problem: ""},
		{Name: "business contact writes", Key: a.Secret, Method: "PUT", Path: "/contacts/" + firm + "/finance", Body: map[string]any{}, Status: 422},
		{Name: "negative amount", Key: a.Secret, Method: "PUT", Path: path,
			Body: map[string]any{"income": []map[string]any{{"type": "salary", "amount": "-1"}}}, Status: 422},
		{Name: "type of another list", Key: a.Secret, Method: "PUT", Path: path,
			Body: map[string]any{"income": []map[string]any{{"type": "mortgage", "amount": "1"}}}, Status: 422},
		{Name: "interval on an asset", Key: a.Secret, Method: "PUT", Path: path,
			Body: map[string]any{"assets": []map[string]any{{"type": "cash", "amount": "1", "interval": "monthly"}}}, Status: 422},
		{Name: "monthly payment on income", Key: a.Secret, Method: "PUT", Path: path,
			Body: map[string]any{"income": []map[string]any{{"type": "salary", "amount": "1", "monthlyPayment": "1"}}}, Status: 422},
		{Name: "three fraction digits", Key: a.Secret, Method: "PUT", Path: path,
			Body: map[string]any{"income": []map[string]any{{"type": "salary", "amount": "1.001"}}}, Status: 422},
		{Name: "amount as a number", Key: a.Secret, Method: "PUT", Path: path,
			Body: map[string]any{"income": []map[string]any{{"type": "salary", "amount": 1}}}, Status: 422},
		{Name: "stale If-Match", Key: a.Secret, Method: "PUT", Path: path, Header: map[string]string{"If-Match": `"1"`},
			Body: map[string]any{"assets": []any{}}, Status: 412, Problem: "etag_mismatch"},
		{Name: "If-Match of an older version", Key: a.Secret, Method: "PUT", Path: path, Header: map[string]string{"If-Match": etag},
			Body: map[string]any{}, Status: 412},
		{Name: `If-Match "0" once they are written`, Key: a.Secret, Method: "PUT", Path: path, Header: map[string]string{"If-Match": `"0"`},
			Body: map[string]any{"assets": []any{}}, Status: 412, Problem: "etag_mismatch"},
		{Name: "other company reads", Key: b.Secret, Path: path, Status: 404},
		{Name: "other company writes", Key: b.Secret, Method: "PUT", Path: path, Body: map[string]any{"assets": []any{}}, Status: 404},
		{Name: "unknown contact", Key: a.Secret, Path: "/contacts/" + a.ID.String() + "/finance", Status: 404},
	})
	if n := count(t, env, a.ID, `SELECT count(*) FROM contact_finances WHERE contact_id = $1 AND jsonb_array_length(income) = 3`, ada); n != 1 {
		t.Errorf("a refused PUT changed the finances")
	}
	// The ETag "0" of finances nobody wrote yet is a precondition a first PUT can state.
	bob := insertContact(t, env, a.ID, "private", "Byron", nil)
	r = env.Do(t, apitest.Request{Method: "PUT", Path: "/contacts/" + bob + "/finance", Key: a.Secret,
		Header: map[string]string{"If-Match": `"0"`}, Body: map[string]any{"assets": []any{}}})
	if r.Status != 200 || r.Header.Get("ETag") != `"1"` {
		t.Errorf(`first PUT with If-Match "0": %d, ETag %q`, r.Status, r.Header.Get("ETag"))
	}
}

// TestContactSub_FinanceErrorCases: the answers of /contacts/{id}/finance to bad ids, missing
// scopes and keys, and malformed bodies; none changes the finances.
func TestContactSub_FinanceErrorCases(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.NewCompany(t)
	x := insertContact(t, env, a.ID, "private", "X", nil)
	path := "/contacts/" + x + "/finance"
	readOnly := a.KeyWithScopes(t, "contacts:read")
	none := a.KeyWithScopes(t, "leads:read")
	env.Run(t, []apitest.Case{
		{Name: "read: bad id", Key: a.Secret, Path: "/contacts/x/finance", Status: 400, Problem: "invalid_id"},
		{Name: "read: scope", Key: none, Path: path, Status: 403, Problem: "insufficient_scope"},
		{Name: "read: no key", Path: path, Status: 401},
		{Name: "write: bad id", Key: a.Secret, Method: "PUT", Path: "/contacts/x/finance", Body: map[string]any{}, Status: 400,
			Problem: "invalid_id"},
		{Name: "write: read scope only", Key: readOnly, Method: "PUT", Path: path, Body: map[string]any{}, Status: 403,
			Problem: "insufficient_scope"},
		{Name: "write: no key", Method: "PUT", Path: path, Body: map[string]any{}, Status: 401},
		{Name: "write: malformed", Key: a.Secret, Method: "PUT", Path: path, Body: `{"income":`, Status: 400, Problem: "malformed_json"},
		{Name: "write: unknown field", Key: a.Secret, Method: "PUT", Path: path, Body: `{"pets":[]}`, Status: 422,
			Problem: "validation_failed"},
		{Name: "write: a list must be an array", Key: a.Secret, Method: "PUT", Path: path, Body: `{"income":{}}`, Status: 422,
			Problem: "validation_failed"},
	})
	if n := count(t, env, a.ID, `SELECT count(*) FROM contact_finances WHERE contact_id = $1`, x); n != 0 {
		t.Errorf("%d finance rows after refused writes", n)
	}
}
