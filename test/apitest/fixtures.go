package apitest

import (
	"context"
	"slices"
	"testing"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// Page is the spec's Page of T as a test decodes it.
type Page[T any] struct {
	Data       []T `json:"data"`
	Pagination struct {
		NextCursor string `json:"nextCursor"`
		HasMore    bool   `json:"hasMore"`
	} `json:"pagination"`
}

// Create POSTs body to path with key, fails the test unless the answer is 201, and returns the
// created resource decoded as T: the one fixture constructor (River's testfactory).
func Create[T any](t testing.TB, env *Env, key, path string, body any) T {
	t.Helper()
	r := env.Do(t, Request{Method: "POST", Path: path, Key: key, Body: body})
	if r.Status != 201 {
		t.Fatalf("POST %s: %d %s", path, r.Status, r.Body)
	}
	var v T
	r.Decode(t, &v)
	return v
}

// Get GETs path with key, fails the test unless the answer is 200, and returns it as T.
func Get[T any](t testing.TB, env *Env, key, path string) T {
	t.Helper()
	r := env.Do(t, Request{Method: "GET", Path: path, Key: key})
	if r.Status != 200 {
		t.Fatalf("GET %s: %d %s", path, r.Status, r.Body)
	}
	var v T
	r.Decode(t, &v)
	return v
}

// FieldErrors checks a 422's errors: field:code pairs in the order the answer lists them.
func FieldErrors(want ...string) func(t *testing.T, r *Response) {
	return func(t *testing.T, r *Response) {
		t.Helper()
		if got := fieldErrors(t, r); !slices.Equal(got, want) {
			t.Errorf("errors %v, want %v", got, want)
		}
	}
}

// FieldErrorSet checks a 422's errors as a set of field:code pairs, for answers that list
// them in no fixed order (one per bad member of a JSON object).
func FieldErrorSet(want ...string) func(t *testing.T, r *Response) {
	return func(t *testing.T, r *Response) {
		t.Helper()
		got := fieldErrors(t, r)
		w := slices.Clone(want)
		slices.Sort(got)
		slices.Sort(w)
		if !slices.Equal(got, w) {
			t.Errorf("errors %v, want %v", got, w)
		}
	}
}

func fieldErrors(t *testing.T, r *Response) []string {
	t.Helper()
	var got []string
	for _, e := range r.Problem(t).Errors {
		got = append(got, e.Field+":"+e.Code)
	}
	return got
}

// InCompany runs f in a transaction pinned to company as the app role, with ent over it (RLS
// and the privacy rules apply, as in a request), and commits; an error from f fails the test.
func (e *Env) InCompany(t testing.TB, company uuid.UUID, f func(ctx context.Context, db *ent.Client) error) {
	t.Helper()
	client := ent.NewClient(ent.Driver(tenancy.NewDriver(e.AppDB)))
	ctx := tenancy.WithCompany(context.Background(), company)
	tx, err := client.Tx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := f(ctx, tx.Client()); err != nil {
		_ = tx.Rollback()
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

// EventsAbout counts the events of type typ in the feed whose data is the record id (data.id),
// as key sees them (the newest 200 of the type).
func EventsAbout(t testing.TB, env *Env, key, typ, id string) int {
	t.Helper()
	var p Page[struct {
		Data map[string]any `json:"data"`
	}]
	r := env.Do(t, Request{Path: "/events?limit=200&types=" + typ, Key: key})
	if r.Status != 200 {
		t.Fatalf("events: %d %s", r.Status, r.Body)
	}
	r.Decode(t, &p)
	n := 0
	for _, e := range p.Data {
		if e.Data["id"] == id {
			n++
		}
	}
	return n
}
