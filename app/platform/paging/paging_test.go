package paging

import (
	"errors"
	"reflect"
	"testing"
	"time"

	entsql "entgo.io/ent/dialect/sql"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
)

type row struct {
	at   *time.Time
	name string
	id   uuid.UUID
}

var (
	byName = Keyset[row]{Column: "name", Value: func(r row) (any, uuid.UUID) { return r.name, r.id }}
	byDue  = Keyset[row]{
		Expr:   func(s *entsql.Selector) string { return "COALESCE(" + s.C("due_at") + ", 'infinity'::timestamptz)" },
		Kind:   Time,
		NullAs: "infinity",
		Desc:   true,
		Value:  func(r row) (any, uuid.UUID) { return r.at, r.id },
	}
)

// render applies k to p and renders what that gives a query on table t.
func render[R any](t *testing.T, k Keyset[R], p Page) (string, []any, Query) {
	t.Helper()
	q, err := k.Apply(p)
	if err != nil {
		t.Fatal(err)
	}
	s := entsql.Dialect("postgres").Select("*").From(entsql.Table("t"))
	q.Where(s)
	q.Order(s)
	got, args := s.Query()
	return got, args, q
}

func TestKeyset_FirstPageHasNoCondition(t *testing.T) {
	got, args, q := render(t, byName, Page{Limit: 10})
	want := `SELECT * FROM "t" ORDER BY "t"."name" ASC, "t"."id" ASC`
	if got != want || len(args) != 0 || q.Limit != 11 {
		t.Errorf("got %q %v limit %d, want %q no args limit 11 (one more than the page: is there another?)", got, args, q.Limit, want)
	}
}

func TestKeyset_ContinuesPastTheKey(t *testing.T) {
	id := uuid.New()
	got, args, _ := render(t, byName, Page{Limit: 5, After: byName.Key(row{name: "Meier", id: id})})
	want := `SELECT * FROM "t" WHERE ("t"."name", "t"."id") > ($1, $2) ORDER BY "t"."name" ASC, "t"."id" ASC`
	if got != want || !reflect.DeepEqual(args, []any{"Meier", id}) {
		t.Errorf("got %q %v, want %q [Meier %s]", got, args, want, id)
	}
}

func TestKeyset_ComputedKeyCarriesNulls(t *testing.T) {
	id := uuid.New()
	key := byDue.Key(row{id: id}) // no due date: sorts as infinity
	if key[0] != "infinity" {
		t.Fatalf("key of a nil time = %v, want infinity first", key)
	}
	got, args, _ := render(t, byDue, Page{Limit: 1, After: key})
	want := `SELECT * FROM "t" WHERE (COALESCE("t"."due_at", 'infinity'::timestamptz), "t"."id") < ($1::timestamptz, $2) ORDER BY COALESCE("t"."due_at", 'infinity'::timestamptz) DESC, "t"."id" DESC`
	if got != want || !reflect.DeepEqual(args, []any{"infinity", id}) {
		t.Errorf("got %q %v, want %q", got, args, want)
	}
	at := time.Date(2026, 11, 27, 10, 0, 0, 5, time.FixedZone("CET", 3600))
	if k := byDue.Key(row{at: &at, id: id}); k[0] != "2026-11-27T09:00:00.000000005Z" {
		t.Errorf("key of a time = %v, want UTC with nanoseconds", k)
	}
}

func TestKeyset_RefusesForeignKeys(t *testing.T) {
	for name, after := range map[string][]string{
		"one part":    {"x"},
		"bad id":      {"x", "not-a-uuid"},
		"bad time":    {"yesterday", uuid.NewString()},
		"three parts": {"a", "b", "c"},
	} {
		k := byDue
		if name == "one part" || name == "three parts" || name == "bad id" {
			k = Keyset[row]{Column: "name", Value: byName.Value}
		}
		_, err := k.Apply(Page{Limit: 1, After: after})
		var inv *errs.Invalid
		if !errors.As(err, &inv) || inv.Errors[0].Code != "invalid_cursor" {
			t.Errorf("%s: err = %v, want 422 invalid_cursor", name, err)
		}
	}
}

func TestKeyset_IntKindTravelsInDecimal(t *testing.T) {
	type ev struct {
		seq *int64
		id  uuid.UUID
	}
	bySeq := Keyset[ev]{Column: "seq", Kind: Int, Value: func(e ev) (any, uuid.UUID) { return e.seq, e.id }}
	id, seq := uuid.New(), int64(9007199254740993) // past float64's integers: must not round
	key := bySeq.Key(ev{seq: &seq, id: id})
	if key[0] != "9007199254740993" {
		t.Fatalf("key = %v, want the sequence in decimal", key)
	}
	got, args, q := render(t, bySeq, Page{Limit: 2, After: key})
	want := `SELECT * FROM "t" WHERE ("t"."seq", "t"."id") > ($1, $2) ORDER BY "t"."seq" ASC, "t"."id" ASC`
	if got != want || !reflect.DeepEqual(args, []any{seq, id}) || q.Limit != 3 {
		t.Errorf("got %q %v limit %d, want %q [%d %s] limit 3", got, args, q.Limit, want, seq, id)
	}
	_, err := bySeq.Apply(Page{Limit: 1, After: []string{"12a", id.String()}})
	var inv *errs.Invalid
	if !errors.As(err, &inv) || inv.Errors[0].Code != "invalid_cursor" {
		t.Errorf("not a number: err = %v, want 422 invalid_cursor", err)
	}
}
