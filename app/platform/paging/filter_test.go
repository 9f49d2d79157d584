package paging

import (
	"errors"
	"testing"

	entsql "entgo.io/ent/dialect/sql"
)

type pred func(*entsql.Selector)

type status string

func TestFilter_GivenFiltersNilDoesNot(t *testing.T) {
	name := func(v string) pred { return func(s *entsql.Selector) { s.Where(entsql.EQ(s.C("name"), v)) } }
	state := func(v status) pred { return func(s *entsql.Selector) { s.Where(entsql.EQ(s.C("status"), string(v))) } }
	where := func(ps ...func(*entsql.Selector)) (string, []any) {
		s := entsql.Dialect("postgres").Select("*").From(entsql.Table("t"))
		for _, p := range ps {
			p(s)
		}
		return s.Query()
	}
	given, open := "Meier", "open"
	got, args := where(Filter(&given, name), Enum(&open, state))
	if want := `SELECT * FROM "t" WHERE "t"."name" = $1 AND "t"."status" = $2`; got != want || len(args) != 2 || args[0] != "Meier" || args[1] != "open" {
		t.Errorf("given: %q %v, want %q [Meier open]", got, args, want)
	}
	got, args = where(Filter[string](nil, name), Enum[status](nil, state))
	if want := `SELECT * FROM "t"`; got != want || len(args) != 0 {
		t.Errorf("nil: %q %v, want %q", got, args, want)
	}
}

func TestKeyset_RowsWrapsTheFetch(t *testing.T) {
	rows, err := byName.Rows(Page{Limit: 2}, "names", func(q Query) ([]row, error) {
		if q.Limit != 3 {
			t.Errorf("limit %d, want 3", q.Limit)
		}
		return []row{{name: "a"}}, nil
	})
	if err != nil || len(rows) != 1 {
		t.Errorf("rows %v, %v", rows, err)
	}
	_, err = byName.Rows(Page{Limit: 2}, "names", func(Query) ([]row, error) { return nil, errors.New("down") })
	if err == nil || err.Error() != "list names: down" {
		t.Errorf("err %v, want list names: down", err)
	}
	if _, err = byName.Rows(Page{Limit: 2, After: []string{"x"}}, "names", nil); err == nil {
		t.Error("a foreign cursor key must be refused before the fetch")
	}
}
