package commissions

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/contact"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// The fixtures of the two report tests (reports_test.go, liability_test.go). Entries are
// written directly with SQL in the operator role pinned to the company, as a parsed statement
// would leave them, so the reports are tested without the upload and the parse; contacts are
// written as the app role pinned to the company (their owner is any user), contracts through
// POST /contracts. Names start with rp so they stay apart from the statement tests' helpers.

// rpContact stores a private contact owned by owner (nil: nobody) and returns its id.
func rpContact(t *testing.T, env *apitest.Env, co *apitest.Company, owner *uuid.UUID) string {
	t.Helper()
	var id string
	env.InCompany(t, co.ID, func(ctx context.Context, db *ent.Client) error {
		c, err := db.Contact.Create().SetType(contact.TypePrivate).SetFirstName("Erika").
			SetLastName("Provision").SetNillableOwnerID(owner).Save(ctx)
		if err == nil {
			id = c.ID.String()
		}
		return err
	})
	return id
}

// rpInsurer is the id of the catalog's insurer with VU number vu.
func rpInsurer(t *testing.T, env *apitest.Env, key, vu string) string {
	t.Helper()
	body := apitest.Get[struct {
		Data []struct{ ID string }
	}](t, env, key, "/insurers?vuNumber="+vu)
	if len(body.Data) != 1 {
		t.Fatalf("insurer %s: %+v", vu, body)
	}
	return body.Data[0].ID
}

// rpContract is a contract of the fixtures: its id, contact, insurer and policy number.
type rpContract struct{ ID, Contact, Insurer, Policy string }

// rpMustContract creates an active contract of type typ through POST /contracts; owner is the
// contract's own owner (nil: none).
func rpMustContract(t *testing.T, env *apitest.Env, key, contactID, insurerID, typ string, owner *uuid.UUID) rpContract {
	t.Helper()
	policy := "PR-" + typ + "-" + uuid.NewString()[:8]
	body := map[string]any{"contactId": contactID, "insurerId": insurerID, "type": typ, "status": "active",
		"policyNumber": policy, "startDate": "2024-01-01", "premium": "10.00", "paymentFrequency": "monthly"}
	if owner != nil {
		body["ownerId"] = owner.String()
	}
	got := apitest.Create[struct{ ID string }](t, env, key, "/contracts", body)
	return rpContract{ID: got.ID, Contact: contactID, Insurer: insurerID, Policy: policy}
}

// rpEntry is an entry to seed: matched to Contract (nil: unmatched), of Insurer ("" none).
type rpEntry struct {
	Contract *rpContract
	Insurer  string
	Type     string
	Amount   string
	Booked   string
}

// rpSeed stores one statement of company co holding entries, as the parse would leave it.
func rpSeed(t testing.TB, env *apitest.Env, co *apitest.Company, entries ...rpEntry) {
	t.Helper()
	st := uuid.New()
	err := env.Operator(context.Background(), co.ID, func(tx *sql.Tx) error {
		if _, err := tx.Exec(`INSERT INTO commission_statements (id, created_at, updated_at, format, status, import_status,
			filename, size, sha256, blob_key, issues, entry_count, company_id)
			VALUES ($1, now(), now(), 'csv', 'received', 'processed', 'seed.csv', 1, repeat('0', 64), $2, '[]', $3, $4)`,
			st, "seed/"+st.String(), len(entries), co.ID); err != nil {
			return fmt.Errorf("statement: %w", err)
		}
		var (
			vals []string
			args []any
		)
		flush := func() error {
			if len(vals) == 0 {
				return nil
			}
			_, err := tx.Exec(`INSERT INTO commission_entries (id, created_at, updated_at, statement_id, insurer_id, contract_id,
				contact_id, matched_by, type, amount, booked_on, line, company_id) VALUES `+strings.Join(vals, ", "), args...)
			vals, args = nil, nil
			return err
		}
		for i, e := range entries {
			var contract, contact, matched, insurer any
			if e.Contract != nil {
				contract, contact, matched = e.Contract.ID, e.Contract.Contact, "auto"
			}
			if e.Insurer != "" {
				insurer = e.Insurer
			}
			n := len(args)
			vals = append(vals, fmt.Sprintf("(gen_random_uuid(), now(), now(), $%d, $%d, $%d, $%d, $%d, $%d, $%d::numeric, $%d::date, $%d, $%d)",
				n+1, n+2, n+3, n+4, n+5, n+6, n+7, n+8, n+9, n+10))
			args = append(args, st, insurer, contract, contact, matched, e.Type, e.Amount, e.Booked, i+1, co.ID)
			if len(vals) == 500 {
				if err := flush(); err != nil {
					return err
				}
			}
		}
		return flush()
	})
	if err != nil {
		t.Fatalf("seed entries: %v", err)
	}
}

// rpRule stores a liability rule of company co (insurer "" and typ "": every one).
func rpRule(t testing.TB, env *apitest.Env, co *apitest.Company, insurer, typ string, months int) {
	t.Helper()
	var ins any
	if insurer != "" {
		ins = insurer
	}
	err := env.Operator(context.Background(), co.ID, func(tx *sql.Tx) error {
		_, err := tx.Exec(`INSERT INTO commission_liability_rules (id, created_at, updated_at, insurer_id, contract_type, months, company_id)
			VALUES (gen_random_uuid(), now(), now(), $1, $2, $3, $4)`, ins, typ, months, co.ID)
		return err
	})
	if err != nil {
		t.Fatalf("rule: %v", err)
	}
}

// rpRow and rpReport are GET /reports/commissions as a test reads it.
type rpRow struct {
	Key     *string `json:"key"`
	Label   string  `json:"label"`
	Amount  string  `json:"amount"`
	Entries int64   `json:"entries"`
}

type rpReport struct {
	Data  []rpRow `json:"data"`
	Total string  `json:"total"`
}

// rpCommissions GETs the commission report with query q.
func rpCommissions(t *testing.T, env *apitest.Env, key string, q url.Values) rpReport {
	t.Helper()
	return apitest.Get[rpReport](t, env, key, "/reports/commissions?"+q.Encode())
}

// row is the row of key k ("" for the null key) or fails.
func (b rpReport) row(t *testing.T, k string) rpRow {
	t.Helper()
	for _, r := range b.Data {
		if (r.Key == nil && k == "") || (r.Key != nil && *r.Key == k) {
			return r
		}
	}
	t.Fatalf("no row %q in %+v", k, b.Data)
	return rpRow{}
}

// keys are the rows' keys in order ("" for null).
func (b rpReport) keys() []string {
	out := make([]string, len(b.Data))
	for i, r := range b.Data {
		if r.Key != nil {
			out[i] = *r.Key
		}
	}
	return out
}

// rpLiabilityRow and rpLiabilityReport are GET /reports/cancellation-liability as a test reads it.
type rpLiabilityRow struct {
	ContractID      string  `json:"contractId"`
	ContactID       string  `json:"contactId"`
	InsurerName     string  `json:"insurerName"`
	PolicyNumber    *string `json:"policyNumber"`
	OpenLiability   string  `json:"openLiability"`
	LiabilityEndsOn string  `json:"liabilityEndsOn"`
}

type rpLiabilityReport struct {
	Data  []rpLiabilityRow `json:"data"`
	Total string           `json:"total"`
}

// rpLiability GETs the liability report on asOf ("" for the default).
func rpLiability(t *testing.T, env *apitest.Env, key, asOf string) rpLiabilityReport {
	t.Helper()
	p := "/reports/cancellation-liability"
	if asOf != "" {
		p += "?asOf=" + asOf
	}
	return apitest.Get[rpLiabilityReport](t, env, key, p)
}

// of is the row of contract id, or nil when the report has none.
func (b rpLiabilityReport) of(id string) *rpLiabilityRow {
	for i := range b.Data {
		if b.Data[i].ContractID == id {
			return &b.Data[i]
		}
	}
	return nil
}

// rpQ builds a query from pairs.
func rpQ(kv ...string) url.Values {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Set(kv[i], kv[i+1])
	}
	return v
}
