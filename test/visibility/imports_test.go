package visibility

import (
	"bytes"
	"mime/multipart"
	"strings"
	"testing"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// TestVisibility_Imports: an import is its creator's (creator_id, app_visible_owner): a
// manager's import is listed and read by every credential that sees all contacts, and by no
// other. Importing is for managers and admins (policy.csv): every agent credential is 403 on
// all five operations, whoever's the import; another company's or the sandbox's key gets 404.
// Catches a list or read that ignores the creator's visibility, and an agent reaching a whole
// file of customers' data through the imports scope.
func TestVisibility_Imports(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, _ := mw.CreateFormFile("file", "kontakte.csv")
	_, _ = fw.Write([]byte("Vorname;Nachname\nImke;Import\n"))
	_ = mw.Close()
	r := w.env.Do(t, apitest.Request{Method: "POST", Path: "/imports", Key: w.keys["manager key"], Body: buf.Bytes(),
		Header: map[string]string{"Content-Type": mw.FormDataContentType()}})
	if r.Status != 202 {
		t.Fatalf("upload: %d %s", r.Status, r.Body)
	}
	id := idOf(t, r)
	for name, key := range w.keys {
		t.Run(name, func(t *testing.T) {
			agent := strings.HasPrefix(name, "agent")
			get := w.env.Do(t, apitest.Request{Path: "/imports/" + id, Key: key})
			list := w.env.Do(t, apitest.Request{Path: "/imports?limit=100", Key: key})
			rows := w.env.Do(t, apitest.Request{Path: "/imports/" + id + "/rows", Key: key})
			switch {
			case agent:
				if get.Status != 403 || list.Status != 403 || rows.Status != 403 {
					t.Errorf("agent: get %d list %d rows %d, want 403", get.Status, list.Status, rows.Status)
				}
			case w.seesUnowned[name]:
				if get.Status != 200 || list.Status != 200 || !strings.Contains(string(list.Body), id) || rows.Status != 200 {
					t.Errorf("sees all: get %d list %d (listed %v) rows %d", get.Status, list.Status,
						strings.Contains(string(list.Body), id), rows.Status)
				}
			default: // another company, the sandbox
				if get.Status != 404 || list.Status != 200 || strings.Contains(string(list.Body), id) || rows.Status != 404 {
					t.Errorf("other company: get %d list %d rows %d", get.Status, list.Status, rows.Status)
				}
			}
		})
	}
}
