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
