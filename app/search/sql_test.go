package search

import (
	"slices"
	"strings"
	"testing"
)

// Catches: a name query that runs the contracts' branch (every contract's key tested against
// its letters), a policy number that no longer does.
func TestSearchedTypes(t *testing.T) {
	for _, c := range []struct {
		q     string
		types []string
		want  []string
	}{
		{"Müller", Types, []string{TypeContact, TypeLead, TypeDocument}},
		{"HV-000.123.456", Types, Types},
		{"Müller 2", Types, Types},
		{"٣٤٥ab", []string{TypeContract}, []string{TypeContract}},
		{"KFZ", []string{TypeContract}, nil},
	} {
		if got := searchedTypes(Query{Q: c.q, Types: c.types}); !slices.Equal(got, c.want) {
			t.Errorf("searchedTypes(%q, %v) = %v, want %v", c.q, c.types, got, c.want)
		}
	}
}

// Catches: the bounded statement sent where the migration's leakproof operator is missing
// (an error: no operator @@>), the unbounded one scoring without its conditions, owners
// numbered onto a word's parameter.
func TestStatementShapes(t *testing.T) {
	unbounded := statement(Types, shape{words: 2})
	if strings.Contains(unbounded, "@@>") || strings.Contains(unbounded, "LIMIT 100") || !strings.Contains(unbounded, " @@ ") {
		t.Errorf("unbounded statement uses @@> or a cap:\n%s", unbounded)
	}
	bounded := statement(Types, shape{words: 2, bounded: true, restricted: true})
	for _, want := range []string{"OPERATOR(public.@@>)", "LIMIT 100", "search_contact_title(", "search_lead_title(",
		"c.owner_id = ANY($6::uuid[])", "l.owner_id = ANY($6::uuid[])", "k.contact_id IN (SELECT o.id FROM public.contacts o WHERE o.owner_id = ANY($6::uuid[]))"} {
		if !strings.Contains(bounded, want) {
			t.Errorf("bounded restricted statement lacks %q", want)
		}
	}
	if strings.Contains(statement(Types, shape{words: 2, bounded: true}), "uuid[]") {
		t.Error("owners named for a credential that sees all")
	}
}
