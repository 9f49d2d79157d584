package reports

import (
	"context"
	"fmt"
	"net/url"
	"testing"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/contact"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// The fixtures of the portfolio, renewals and cross-selling tests. Contacts are written as the
// app role pinned to the company (their owner is any user, which POST /contacts would set to
// the caller); contracts go through POST /contracts with the company key, so annualPremium is
// what the contracts service computes, as in production.

// mustContact stores a contact of type ("private" or "business") owned by owner (nil: nobody).
func mustContact(t *testing.T, env *apitest.Env, co *apitest.Company, typ, name string, owner *uuid.UUID) string {
	t.Helper()
	var id string
	env.InCompany(t, co.ID, func(ctx context.Context, db *ent.Client) error {
		m := db.Contact.Create().SetType(contact.Type(typ)).SetNillableOwnerID(owner)
		if typ == "business" {
			m.SetCompanyName(name).SetFirstName("Ansprech").SetLastName("Partner")
		} else {
			m.SetFirstName("Erika").SetLastName(name)
		}
		c, err := m.Save(ctx)
		if err == nil {
			id = c.ID.String()
		}
		return err
	})
	return id
}

// insurerID is the id of the catalog's insurer with VU number vu.
func insurerID(t *testing.T, env *apitest.Env, key, vu string) string {
	t.Helper()
	body := apitest.Get[struct {
		Data []struct{ ID string }
	}](t, env, key, "/insurers?vuNumber="+vu)
	if len(body.Data) != 1 {
		t.Fatalf("insurer %s: %+v", vu, body)
	}
	return body.Data[0].ID
}

// ct is a contract to create; empty strings are left out of the body.
type ct struct {
	Contact, Insurer, Type, Status         string
	Start, End, MainRenewal, Premium, Freq string
	Owner                                  *uuid.UUID
}

// mustContract creates c through POST /contracts and returns its id.
func mustContract(t *testing.T, env *apitest.Env, key string, c ct) string {
	t.Helper()
	body := map[string]any{"contactId": c.Contact, "insurerId": c.Insurer, "type": c.Type, "status": c.Status,
		"policyNumber": "R1-" + c.Type + "-" + uuid.NewString()[:13]}
	for k, v := range map[string]string{"startDate": c.Start, "endDate": c.End, "mainRenewalDate": c.MainRenewal,
		"premium": c.Premium, "paymentFrequency": c.Freq} {
		if v != "" {
			body[k] = v
		}
	}
	if c.Owner != nil {
		body["ownerId"] = c.Owner.String()
	}
	got := apitest.Create[struct{ ID string }](t, env, key, "/contracts", body)
	return got.ID
}

// portfolioRow and portfolioBody are GET /reports/portfolio as a test reads it; share stays
// the JSON number's text, so its digits are checked as sent.
type portfolioRow struct {
	Key           *string `json:"key"`
	Label         string  `json:"label"`
	Contracts     int64   `json:"contracts"`
	Contacts      int64   `json:"contacts"`
	AnnualPremium string  `json:"annualPremium"`
	Share         jsonNum `json:"share"`
}

type portfolioBody struct {
	Data   []portfolioRow `json:"data"`
	Totals struct {
		Contracts     int64  `json:"contracts"`
		Contacts      int64  `json:"contacts"`
		AnnualPremium string `json:"annualPremium"`
	} `json:"totals"`
}

// jsonNum keeps a JSON number's text.
type jsonNum string

func (n *jsonNum) UnmarshalJSON(b []byte) error { *n = jsonNum(b); return nil }

// portfolio GETs the portfolio report with query q (url-encoded pairs).
func portfolio(t *testing.T, env *apitest.Env, key string, q url.Values) portfolioBody {
	t.Helper()
	return apitest.Get[portfolioBody](t, env, key, "/reports/portfolio?"+q.Encode())
}

// row is the row of key k ("" for the null key) or fails.
func (b portfolioBody) row(t *testing.T, k string) portfolioRow {
	t.Helper()
	for _, r := range b.Data {
		if (r.Key == nil && k == "") || (r.Key != nil && *r.Key == k) {
			return r
		}
	}
	t.Fatalf("no row %q in %+v", k, b.Data)
	return portfolioRow{}
}

// keys are the rows' keys in order ("" for null).
func (b portfolioBody) keys() []string {
	out := make([]string, len(b.Data))
	for i, r := range b.Data {
		if r.Key != nil {
			out[i] = *r.Key
		}
	}
	return out
}

// contractPage and crossPage are the paged reports as a test reads them.
type contractPage = apitest.Page[struct {
	ID           string  `json:"id"`
	PolicyNumber string  `json:"policyNumber"`
	EndDate      *string `json:"endDate"`
}]

type crossItem struct {
	Contact struct {
		ID   string `json:"id"`
		Type string `json:"type"`
		Name string `json:"name"`
	} `json:"contact"`
	Gaps []struct {
		Type   string `json:"type"`
		Label  string `json:"label"`
		Weight int    `json:"weight"`
	} `json:"gaps"`
	Score float64 `json:"score"`
}

type crossPage = apitest.Page[crossItem]

// walk GETs every page of the paged report at path (with its query) with limit per page and
// returns the items' ids in order, checking that every page but the last is full and says so.
func walk[T any](t *testing.T, env *apitest.Env, key, path string, limit int, id func(T) string) []string {
	t.Helper()
	var out []string
	cursor := ""
	for i := 0; i < 100; i++ {
		p := fmt.Sprintf("%s&limit=%d", path, limit)
		if cursor != "" {
			p += "&cursor=" + url.QueryEscape(cursor)
		}
		page := apitest.Get[apitest.Page[T]](t, env, key, p)
		for _, x := range page.Data {
			out = append(out, id(x))
		}
		if !page.Pagination.HasMore {
			return out
		}
		if len(page.Data) != limit {
			t.Fatalf("page %d: %d rows and hasMore", i, len(page.Data))
		}
		cursor = page.Pagination.NextCursor
	}
	t.Fatalf("more than 100 pages")
	return nil
}
