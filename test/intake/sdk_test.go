package intake

import (
	"bytes"
	"testing"

	"github.com/brokerdesk/brokerdesk/app/sdk"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// TestSDK_Served: the stable alias (short cache, ETag, 304, Link to its release) and every
// release (immutable) through the real server, each answer checked against the OpenAPI document.
func TestSDK_Served(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	cur := sdk.Current()
	script := func(want []byte, cache string) func(t *testing.T, r *apitest.Response) {
		return func(t *testing.T, r *apitest.Response) {
			if !bytes.Equal(r.Body, want) || r.Header.Get("Cache-Control") != cache || r.Header.Get("ETag") == "" {
				t.Errorf("%d bytes, headers %v", len(r.Body), r.Header)
			}
		}
	}
	cases := []apitest.Case{
		{Name: "the alias serves the current release briefly cached", Path: "/" + sdk.Path, Status: 200,
			Check: func(t *testing.T, r *apitest.Response) {
				script(sdk.Script(), sdk.AliasCacheControl)(t, r)
				if r.Header.Get("Link") != "<"+cur.Path+`>; rel="canonical"` {
					t.Errorf("Link %q", r.Header.Get("Link"))
				}
			}},
		{Name: "the alias revalidates", Path: "/" + sdk.Path, Header: map[string]string{"If-None-Match": cur.ETag}, Status: 304},
		{Name: "a stale ETag gets the script", Path: "/" + sdk.Path, Header: map[string]string{"If-None-Match": `"old"`}, Status: 200},
		{Name: "an unknown release is 404", Path: "//sdk/v1/brokerdesk.000000000000.js", Status: 404, Problem: "not_found"},
	}
	for _, rel := range sdk.Releases() {
		cases = append(cases,
			apitest.Case{Name: "release " + rel.Hash + " is immutable", Path: "/" + rel.Path, Status: 200,
				Check: script(rel.Content, sdk.CacheControl)},
			apitest.Case{Name: "release " + rel.Hash + " revalidates", Path: "/" + rel.Path,
				Header: map[string]string{"If-None-Match": rel.ETag}, Status: 304})
	}
	env.Run(t, cases)
}
