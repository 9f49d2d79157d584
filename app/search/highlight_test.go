package search

import (
	"database/sql"
	"slices"
	"testing"
)

// Catches: a fold that differs from search_fold on the German letters (a hit without its mark),
// marks inside a word instead of around it, white space lost.
func TestMark(t *testing.T) {
	for _, c := range []struct{ s, q, want string }{
		{"Anna Müller", "mueller", "Anna «Müller»"},
		{"Anna Müller", "MÜLL", "Anna «Müller»"},
		{"mueller@example.de", "mueller@", "«mueller@example.de»"},
		{"José  Groß", "gross jose", "«José»  «Groß»"},
		{"Anna Schmidt", "mueller", "Anna Schmidt"},
	} {
		got, _ := mark(c.s, foldedTerms(queryWords(c.q)))
		if got != c.want {
			t.Errorf("mark(%q, %q) = %q, want %q", c.s, c.q, got, c.want)
		}
	}
}

// Catches: one-character words matched (everything contains "a"), a query of only short words
// matching nothing, more than maxWords LIKE conditions.
func TestQueryWords(t *testing.T) {
	for _, c := range []struct {
		q    string
		want []string
	}{
		{"Anna Müller", []string{"Anna", "Müller"}},
		{"a Müller", []string{"Müller"}},
		{"a b", []string{"a b"}},
		{"1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18", []string{"10", "11", "12", "13", "14", "15", "16", "17"}},
	} {
		if got := queryWords(c.q); !slices.Equal(got, c.want) {
			t.Errorf("queryWords(%q) = %q, want %q", c.q, got, c.want)
		}
	}
}

// Catches: a contract found by another spelling of its number shown without a mark, a
// document's passage replaced by its filename.
func TestHighlightOf(t *testing.T) {
	if got := highlightOf(TypeContract, []string{"HR-123 456/7"}, sql.NullString{}, []string{"hr1234567"}); got != "«HR-123 456/7»" {
		t.Errorf("contract: %q", got)
	}
	passage := sql.NullString{String: "für Herrn «Müller»", Valid: true}
	if got := highlightOf(TypeDocument, []string{"scan.pdf"}, passage, []string{"mueller"}); got != passage.String {
		t.Errorf("document: %q", got)
	}
	if got := highlightOf(TypeContact, []string{"Anna Müller", "anna@example.de", "", "Berlin"}, sql.NullString{}, []string{"berlin"}); got != "«Berlin»" {
		t.Errorf("contact by city: %q", got)
	}
}
