package httpx

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

func newReq(path string) *http.Request { return httptest.NewRequest(http.MethodGet, path, nil) }

func readPage(t *testing.T, r *http.Response) PageBody[int] {
	t.Helper()
	var p PageBody[int]
	if err := json.NewDecoder(r.Body).Decode(&p); err != nil {
		t.Fatal(err)
	}
	return p
}

// stringCase is one row of a table test of a string function.
type stringCase = struct{ in, want string }

// eachCase runs f, named name in failures, on every row of cases.
func eachCase(t *testing.T, name string, f func(string) string, cases []stringCase) {
	t.Helper()
	for _, c := range cases {
		if got := f(c.in); got != c.want {
			t.Errorf("%s(%q) = %q, want %q", name, c.in, got, c.want)
		}
	}
}
