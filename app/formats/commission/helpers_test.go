package commission

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/brokerdesk/brokerdesk/ent/schematype"
)

// readAll reads a statement into a slice.
func readAll(t *testing.T, format string, in []byte, opts Options) ([]Entry, Summary, error) {
	t.Helper()
	var out []Entry
	sum, err := Read(format, bytes.NewReader(in), opts, func(e Entry) error {
		out = append(out, e)
		return nil
	})
	return out, sum, err
}

// total sums the entries exactly.
func total(es []Entry) schematype.Money {
	var m schematype.Money
	for _, e := range es {
		m = m.Add(e.Amount)
	}
	return m
}

// brief renders an entry for comparisons: line, policy, type, code, amount, date.
func brief(e Entry) string {
	return fmt.Sprintf("%d|%s|%s|%s|%s|%s", e.Line, e.PolicyNumber, e.Type, e.Code, e.Amount, e.BookedOn.Format("2006-01-02"))
}

func briefs(es []Entry) string {
	s := make([]string, len(es))
	for i, e := range es {
		s[i] = brief(e)
	}
	return strings.Join(s, "\n")
}

// issueList renders issues as "line:severity:code".
func issueList(is []Issue) string {
	s := make([]string, len(is))
	for i, x := range is {
		s[i] = fmt.Sprintf("%d:%s:%s", x.Line, x.Severity, x.Code)
	}
	return strings.Join(s, " ")
}
