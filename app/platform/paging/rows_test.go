package paging

import (
	"errors"
	"testing"
)

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
