package devrun

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
)

var (
	portalLine     = regexp.MustCompile(`customer portal +(http://\S+/portal/[0-9a-f-]{36})/login`)
	portalCustomer = regexp.MustCompile(`(\S+@\S+) +password (kunde-\S+)`)
	csrfField      = regexp.MustCompile(`name="csrf" value="([^"]+)"`)
	documentLink   = regexp.MustCompile(`href="[^"]*/documents/[0-9a-f-]{36}"`)
)

// checkPortal: `brokerdesk dev` prints the customer portal's sign-in link and a demo
// customer's e-mail and password, and those sign in: the portal then shows her two contracts,
// each once, and exactly one document (the released one of two). Run on both runs of
// TestDev_RunTwice: the second proves the password is set again and nothing is seeded twice.
// Bugs it would catch: the demo customer not seeded, seeded without an active access or with
// another password than the printed one, a link to the wrong company, contracts or documents
// missing or doubled, the unreleased document shown.
func (r *devRun) checkPortal(t *testing.T) {
	t.Helper()
	link, cust := portalLine.FindStringSubmatch(r.out), portalCustomer.FindStringSubmatch(r.out)
	if link == nil || cust == nil {
		t.Fatalf("dev printed no portal link with a customer's e-mail and password:\n%s", r.out)
	}
	base, email, password := link[1], cust[1], cust[2]
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	get := func(path string) string {
		t.Helper()
		resp, err := client.Get(base + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s: %d\n%s", path, resp.StatusCode, b)
		}
		return string(b)
	}
	token := csrfField.FindStringSubmatch(get("/login"))
	if token == nil {
		t.Fatal("the sign-in page has no CSRF field")
	}
	resp, err := client.PostForm(base+"/login", url.Values{"csrf": {token[1]}, "email": {email}, "password": {password}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	// Signed in, the pages answer 200 (get fails otherwise: 401 is the sign-in page).
	contracts := get("/contracts")
	for _, p := range []string{"HR-2026-0042", "PHV-2025-1187"} { // cmd/brokerdesk/devportal.go
		if n := strings.Count(contracts, "<dd>"+p+"</dd>"); n != 1 { // its row's Vertragsnummer
			t.Errorf("the demo customer's contracts page shows %s %d times, want once", p, n)
		}
	}
	if n := len(documentLink.FindAllString(get("/documents"), -1)); n != 1 {
		t.Errorf("the demo customer's documents page links %d documents, want the 1 released", n)
	}
}
